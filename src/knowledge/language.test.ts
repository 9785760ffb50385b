import { describe, expect, it } from 'vitest';
import { detectLanguage, isoCodeOf, toSearchLanguage } from './language.js';

describe('detectLanguage', () => {
  it('recognises English and Norwegian prose', () => {
    expect(detectLanguage('The planner chooses the cheapest plan for the query and then executes it.')).toBe(
      'english',
    );
    expect(detectLanguage('Bilene kjørte hjem til byen, og det var ikke mye trafikk på veien.')).toBe(
      'norwegian',
    );
    expect(
      detectLanguage('Der Planer wählt den günstigsten Plan und führt ihn dann aus, wie es sich gehört.'),
    ).toBe('german');
  });

  it('falls back when there is too little to go on', () => {
    expect(detectLanguage('SELECT 1')).toBe('simple');
    expect(detectLanguage('vacuum', 'english')).toBe('english');
    expect(detectLanguage('')).toBe('simple');
  });
});

describe('toSearchLanguage', () => {
  it('accepts ISO codes, regional tags and configuration names', () => {
    expect(toSearchLanguage('en')).toBe('english');
    expect(toSearchLanguage('nb-NO')).toBe('norwegian');
    expect(toSearchLanguage('nn')).toBe('norwegian');
    expect(toSearchLanguage('Norwegian')).toBe('norwegian');
    expect(toSearchLanguage('klingon')).toBeUndefined();
    expect(toSearchLanguage(undefined)).toBeUndefined();
    expect(isoCodeOf('norwegian')).toBe('no');
  });
});
