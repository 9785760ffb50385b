import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkQuestionSet } from '../bench/questions/question-set.js';
import { postgresDocs, skipWithoutPostgresDocs } from './helpers/corpus.js';
import { missingOutsideCI, skipBecause } from './helpers/skip.js';

/** The GIMP 2.10 manual in four languages (Debian package gimp-help-en, -nn, -da, -sv). */
const gimpHelp = '/usr/share/gimp/2.0/help';

// The committed evaluation set (bench/questions/README.md): what issue 16 asks of it.
describe('bench/questions/postgres-docs.jsonl', () => {
  it.skipIf(skipWithoutPostgresDocs('the question set page check'))(
    'parses, is labelled, and names only pages the PostgreSQL docs have',
    async () => {
      const text = await readFile(new URL('../bench/questions/postgres-docs.jsonl', import.meta.url), 'utf8');
      const result = checkQuestionSet(text, postgresDocs());
      expect(result.problems).toEqual([]);
      expect(result.questions).toBeGreaterThanOrEqual(120);
      expect(result.counts.language?.no).toBeGreaterThanOrEqual(20);
      expect(result.counts.style?.paraphrase).toBeGreaterThanOrEqual(40);
      expect(result.counts.split?.test).toBeGreaterThanOrEqual(40);
    },
  );

  it.skipIf(skipWithoutPostgresDocs('the fresh question set page check'))(
    'has a fresh held-out set that passes the same check',
    async () => {
      const text = await readFile(
        new URL('../bench/questions/postgres-docs-fresh.jsonl', import.meta.url),
        'utf8',
      );
      const result = checkQuestionSet(text, postgresDocs());
      expect(result.problems).toEqual([]);
      expect(result.questions).toBe(60);
      expect(result.counts.split?.test).toBe(60);
    },
  );

  it.skipIf(skipWithoutPostgresDocs('the second dev question set page check'))(
    'has a second dev set, 120 questions in both languages and styles, that passes the same check',
    async () => {
      const text = await readFile(
        new URL('../bench/questions/postgres-docs-dev2.jsonl', import.meta.url),
        'utf8',
      );
      const result = checkQuestionSet(text, postgresDocs());
      expect(result.problems).toEqual([]);
      expect(result.questions).toBe(120);
      expect(result.counts.split?.dev).toBe(120);
      expect(result.counts.language).toEqual({ en: 80, no: 40 });
      expect(result.counts.style).toEqual({ keyword: 60, paraphrase: 60 });
    },
  );

  it('reports a page the corpus lacks and a missing label', async () => {
    // A corpus of one page, so the check runs on any machine.
    const corpus = await mkdtemp(path.join(tmpdir(), 'weir-corpus-'));
    try {
      await writeFile(path.join(corpus, 'present.html'), '<h1>here</h1>');
      const text = [
        '{"id": "a", "question": "q", "expected": ["no-such-page.html"], "style": "keyword", "language": "en"}',
        '{"id": "b", "question": "q", "expected": ["present.html"], "style": "keyword", "language": "en", "split": "dev"}',
      ].join('\n');
      const result = checkQuestionSet(text, corpus);
      expect(result.problems).toEqual([
        'a: split must be one of dev, test, blind',
        `a: no-such-page.html is not in ${corpus}`,
      ]);
    } finally {
      await rm(corpus, { recursive: true, force: true });
    }
  });

  it.skipIf(skipWithoutPostgresDocs('the blind question set page check'))(
    'has a blind set, labelled blind, that passes the same check',
    async () => {
      const text = await readFile(
        new URL('../bench/questions/postgres-docs-blind.jsonl', import.meta.url),
        'utf8',
      );
      const result = checkQuestionSet(text, postgresDocs());
      expect(result.problems).toEqual([]);
      expect(result.questions).toBe(60);
      expect(result.counts.split).toEqual({ blind: 60 });
    },
  );

  it.skipIf(
    skipBecause(
      missingOutsideCI(existsSync(`${gimpHelp}/nn/index.html`), `the GIMP manual is not at ${gimpHelp}`),
      'the GIMP question set page check',
    ),
  )('has a GIMP set whose pages exist in English, and in Nynorsk for the Norwegian questions', async () => {
    const text = await readFile(new URL('../bench/questions/gimp-help.jsonl', import.meta.url), 'utf8');
    const result = checkQuestionSet(text, `${gimpHelp}/en`);
    expect(result.problems).toEqual([]);
    expect(result.counts.split).toEqual({ dev: 48, blind: 32 });
    expect(result.counts.language).toEqual({ en: 40, no: 40 });
    const norwegian = text.split('\n').filter((line) => line.includes('"language": "no"'));
    expect(norwegian).toHaveLength(40);
    expect(checkQuestionSet(norwegian.join('\n'), `${gimpHelp}/nn`).problems).toEqual([]);
  });

  it('reports a corpus that does not exist instead of checking no page', () => {
    const text =
      '{"id": "a", "question": "q", "expected": ["x.html"], "style": "keyword", "language": "en", "split": "dev"}';
    const result = checkQuestionSet(text, '/nonexistent/weir-corpus');
    expect(result.problems).toEqual(['the corpus /nonexistent/weir-corpus does not exist']);
  });
});
