import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { checkQuestionSet } from '../bench/questions/question-set.js';

// The committed evaluation set (bench/questions/README.md): what issue 16 asks of it.
describe('bench/questions/postgres-docs.jsonl', () => {
  it('parses, is labelled, and names only pages the PostgreSQL docs have (where installed)', async () => {
    const text = await readFile(new URL('../bench/questions/postgres-docs.jsonl', import.meta.url), 'utf8');
    const result = checkQuestionSet(text, '/usr/share/doc/postgresql-doc-15/html');
    expect(result.problems).toEqual([]);
    expect(result.questions).toBeGreaterThanOrEqual(120);
    expect(result.counts.language?.no).toBeGreaterThanOrEqual(20);
    expect(result.counts.style?.paraphrase).toBeGreaterThanOrEqual(40);
    expect(result.counts.split?.test).toBeGreaterThanOrEqual(40);
  });

  it('has a fresh held-out set that passes the same check', async () => {
    const text = await readFile(
      new URL('../bench/questions/postgres-docs-fresh.jsonl', import.meta.url),
      'utf8',
    );
    const result = checkQuestionSet(text, '/usr/share/doc/postgresql-doc-15/html');
    expect(result.problems).toEqual([]);
    expect(result.questions).toBe(60);
    expect(result.counts.split?.test).toBe(60);
  });

  it('has a blind set, labelled blind, that passes the same check', async () => {
    const text = await readFile(
      new URL('../bench/questions/postgres-docs-blind.jsonl', import.meta.url),
      'utf8',
    );
    const result = checkQuestionSet(text, '/usr/share/doc/postgresql-doc-15/html');
    expect(result.problems).toEqual([]);
    expect(result.questions).toBe(60);
    expect(result.counts.split).toEqual({ blind: 60 });
  });

  it('reports a page the corpus lacks and a missing label', () => {
    const text =
      '{"id": "a", "question": "q", "expected": ["no-such-page.html"], "style": "keyword", "language": "en"}';
    const result = checkQuestionSet(text, '/usr/share/doc/postgresql-doc-15/html');
    expect(result.problems).toContain('a: split must be one of dev, test, blind');
  });
});
