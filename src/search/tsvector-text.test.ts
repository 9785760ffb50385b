import { describe, expect, it } from 'vitest';
import { parseTsvectorText } from './tsvector-text.js';

describe('parseTsvectorText', () => {
  it('counts each lexeme positions and those of weight A, with quotes and backslashes unescaped', () => {
    // What PostgreSQL prints for setweight(to_tsvector('simple', 'Foo it''s'), 'A') || ... (see tsvectorout).
    const text = "'a\\\\b':4 'bar':3A,9,10B 'foo':1A 'it''s':2A,12C 'q':8";
    expect(parseTsvectorText(text)).toEqual([
      { lexeme: 'a\\b', occurrences: 1, headingOccurrences: 0 },
      { lexeme: 'bar', occurrences: 3, headingOccurrences: 1 },
      { lexeme: 'foo', occurrences: 1, headingOccurrences: 1 },
      { lexeme: "it's", occurrences: 2, headingOccurrences: 1 },
      { lexeme: 'q', occurrences: 1, headingOccurrences: 0 },
    ]);
  });

  it('counts a lexeme without positions (a stripped vector) once, as ts_rank does', () => {
    expect(parseTsvectorText("'bar' 'foo':2")).toEqual([
      { lexeme: 'bar', occurrences: 1, headingOccurrences: 0 },
      { lexeme: 'foo', occurrences: 1, headingOccurrences: 0 },
    ]);
  });

  it('refuses text that is not a tsvector', () => {
    expect(() => parseTsvectorText('bar:1')).toThrow(/unexpected/);
    expect(() => parseTsvectorText("'bar")).toThrow(/unterminated/);
  });
});
