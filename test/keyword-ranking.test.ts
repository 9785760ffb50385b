/**
 * BM25F keyword ranking (src/search/keyword-sql.ts) on each database: what a user relies on
 * when a question is typed as it comes, with the defaults.
 */
import { sql } from 'kysely';
import { uuidv7 } from 'uuidv7';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.js';
import { wordVectorsOf } from '../src/embedding/word-vectors.js';
import { keywordCandidatesSql } from '../src/search/keyword-sql.js';
import { createQueryExpander } from '../src/search/query-expansion.js';
import { createSearchService, type SearchService } from '../src/search/search-service.js';
import { createKnowledgeIndex, type KnowledgeIndex } from '../src/search-index/knowledge-index.js';
import { databaseTargets } from './helpers/databases.js';

interface Page {
  url: string;
  title: string;
  sections: { headings: string[]; text: string }[];
}

const filler = (topic: string, words: number) =>
  Array.from({ length: words }, (_, index) => `${topic}${index % 7 === 0 ? ' table' : ''} row`).join(' ');

const pages: Page[] = [
  {
    url: 'https://docs.example.org/toast',
    title: 'TOAST',
    sections: [
      { headings: ['TOAST'], text: 'Large column values are compressed and moved out of line by TOAST.' },
    ],
  },
  {
    url: 'https://docs.example.org/tables',
    title: 'Tables',
    sections: [
      {
        headings: ['Tables'],
        text: 'A table has columns. Create a table, alter a table, drop a table: table after table, the table is the basic unit.',
      },
    ],
  },
  {
    // A listing page: every term of the manual once, in one long segment.
    url: 'https://docs.example.org/bookindex',
    title: 'Index',
    sections: [
      {
        headings: ['Index'],
        text: `Index of terms: autovacuum, checkpoint, transaction id wraparound, freezing, replication slot, ${filler('entry', 300)}`,
      },
    ],
  },
  {
    url: 'https://docs.example.org/routine-vacuuming',
    title: 'Routine Vacuuming',
    sections: [
      {
        headings: ['Routine Vacuuming', 'Preventing Transaction ID Wraparound Failures'],
        text: 'Every row version carries a transaction ID. Vacuum freezes old row versions so that the transaction counter can wrap around safely.',
      },
    ],
  },
  {
    url: 'https://docs.example.org/row-estimation',
    title: 'Row Estimation Examples',
    sections: [
      {
        headings: ['Row Estimation Examples'],
        text: 'The planner estimates the number of rows a condition selects from the statistics in pg_statistic, such as the histogram bounds.',
      },
    ],
  },
];

describe.each(databaseTargets())('keyword ranking on $name', (target) => {
  let database: Database;
  let index: KnowledgeIndex;
  let search: SearchService;
  const executionId = uuidv7();

  async function indexPages(list: readonly Page[]) {
    await index.indexDocuments(
      list.map((page) => ({
        document: { sourceKey: page.url, url: page.url, title: page.title, language: 'english', executionId },
        segments: page.sections.map((section, segmentIndex) => ({
          segmentIndex,
          text: section.text,
          tokenCount: section.text.split(/\s+/).length,
          headingPath: section.headings,
        })),
        total: page.sections.length,
      })),
    );
  }
  const urls = async (query: string, options: { match?: 'all' | 'any' } = {}) =>
    (await search.search('keyword', { query, ...options })).results.map((result) => result.source.url);

  beforeAll(async () => {
    database = await target.open();
    index = createKnowledgeIndex(database.db);
    // Word vectors of a toy vocabulary: "pile" and "accumulate" mean the same; nothing else does.
    const words = ['pile', 'accumulate', 'tuples', 'garden', 'old'];
    const vectors = new Float32Array(words.length * 3);
    vectors.set([1, 0, 0, 0.9, Math.sqrt(1 - 0.81), 0, 0, 0, 1, 0, 1, 0, 0, -1, 0]);
    search = createSearchService({
      db: database.db,
      embedders: undefined,
      expander: createQueryExpander({
        db: database.db,
        vectors: async () => wordVectorsOf(words, vectors, 3),
        // Pages are added between searches here: look for a changed index every time.
        options: { refreshMs: 0 },
      }),
    });
    await indexPages(pages);
  });
  afterAll(async () => {
    await database?.close();
  });

  it('a rare query term outranks a common one', async () => {
    // "table" is in three pages, six times in one of them; "toast" is in one.
    const ranked = await urls('table toast');
    expect(ranked[0]).toBe('https://docs.example.org/toast');
    expect(ranked).toContain('https://docs.example.org/tables');
  });

  it('a long listing page does not outrank the page about the term', async () => {
    const ranked = await urls('transaction id wraparound');
    expect(ranked[0]).toBe('https://docs.example.org/routine-vacuuming');
    expect(ranked).toContain('https://docs.example.org/bookindex');
  });

  it('a natural-language question finds its page with default options, and strict matching is an option', async () => {
    const question = 'How does the planner estimate row counts?';
    expect((await urls(question))[0]).toBe('https://docs.example.org/row-estimation');
    // No page says "counts": with every term required, nothing matches.
    expect(await urls(question, { match: 'all' })).toEqual([]);
    const response = await search.search('keyword', { query: question });
    expect(response.parameters.match).toBe('any');
  });

  it('expands an English question with indexed words near its words in meaning', async () => {
    await indexPages([
      {
        url: 'https://docs.example.org/dead-tuples',
        title: 'Dead tuples',
        sections: [{ headings: ['Dead tuples'], text: 'Dead tuples accumulate until vacuum removes them.' }],
      },
      {
        url: 'https://docs.example.org/garden',
        title: 'Garden',
        sections: [{ headings: ['Garden'], text: 'A pile of leaves in the garden, a pile of stones.' }],
      },
    ]);
    const question = 'why does it pile up';
    const expanded = await search.search('keyword', { query: question });
    expect(expanded.parameters.query_expansions).toEqual([
      { from: 'pile', lexeme: 'accumul', similarity: 0.9 },
    ]);
    // The page with the literal word first; the page that says it in other words is found too.
    expect(expanded.results.map((result) => result.source.url)).toEqual([
      'https://docs.example.org/garden',
      'https://docs.example.org/dead-tuples',
    ]);
    const literal = await search.search('keyword', { query: question, expand: false });
    expect(literal.parameters.query_expansions).toEqual([]);
    expect(literal.results.map((result) => result.source.url)).toEqual(['https://docs.example.org/garden']);
  });

  it('takes the segments holding the two rarest words together when every word is over the candidate budget', async () => {
    const ranked = async (text: string, parameters: object) =>
      (
        await keywordCandidatesSql(
          { text, languages: ['english'], match: 'any', parameters },
          { executionIds: null, language: undefined },
          10,
        ).execute(database.db)
      ).rows as { segment_id: string }[];
    // "table" is in three segments, "row" in three; only the listing page holds both.
    const wide = await ranked('table row', {});
    expect(wide.length).toBeGreaterThan(1);
    const narrow = await ranked('table row', { candidateBudget: 1 });
    expect(narrow).toHaveLength(1);
    // And the cap holds whatever matches.
    expect(await ranked('table row', { maxCandidates: 2 })).toHaveLength(2);
  });

  it("spends the candidate budget on the question's own words before their expansions", async () => {
    // "table" (lexeme tabl) is in two segments, "toast" in one. With a budget of two postings, a
    // rare expansion taken first would leave the segments holding the question's own word out.
    const candidates = await keywordCandidatesSql(
      {
        text: 'table',
        languages: ['english'],
        match: 'any',
        expansions: [{ lexeme: 'toast', weight: 0.3 }],
        parameters: { candidateBudget: 2 },
      },
      { executionIds: null, language: undefined },
      10,
    ).execute(database.db);
    expect(candidates.rows).toHaveLength(2);
  });

  it('keeps term statistics in step with indexing, re-indexing and deletion', async () => {
    const documentFrequency = async (lexeme: string) =>
      Number(
        (
          await sql<{
            segments: number;
          }>`select segments from knowledge_terms where lexeme = ${lexeme}`.execute(database.db)
        ).rows[0]?.segments ?? 0,
      );
    const totals = async () =>
      (
        await sql<{ segments: string; tokens: string }>`
          select segments, tokens from knowledge_segment_totals where language = 'english'`.execute(
          database.db,
        )
      ).rows[0];
    const before = await totals();
    expect(await documentFrequency('quokka')).toBe(0);
    const page: Page = {
      url: 'https://docs.example.org/quokka',
      title: 'Quokka',
      sections: [
        { headings: ['Quokka'], text: 'A quokka is a small marsupial.' },
        { headings: ['Quokka', 'Habitat'], text: 'The quokka lives on Rottnest Island.' },
      ],
    };
    await indexPages([page]);
    expect(await documentFrequency('quokka')).toBe(2);
    expect(Number((await totals())?.segments)).toBe(Number(before?.segments) + 2);
    // Re-indexed shorter: one segment left, without the island.
    await indexPages([
      { ...page, sections: [{ headings: ['Quokka'], text: 'A quokka is a small marsupial.' }] },
    ]);
    expect(await documentFrequency('quokka')).toBe(1);
    expect(await documentFrequency('rottnest')).toBe(0);
    expect(Number((await totals())?.segments)).toBe(Number(before?.segments) + 1);
    // The document deleted: its segments go by cascade, and so do their statistics.
    await sql`delete from knowledge_documents where url = ${page.url}`.execute(database.db);
    expect(await documentFrequency('quokka')).toBe(0);
    expect(await totals()).toEqual(before);
  });

  it('counts a term in the heading path above the same term in the text', async () => {
    await indexPages([
      {
        url: 'https://docs.example.org/heading',
        title: 'Checkpoints',
        sections: [{ headings: ['Checkpoints'], text: 'Settings that control how often the server writes.' }],
      },
      {
        url: 'https://docs.example.org/body',
        title: 'Server',
        sections: [{ headings: ['Server'], text: 'Settings that control how often checkpoints happen.' }],
      },
    ]);
    const ranked = await urls('checkpoints');
    expect(ranked.slice(0, 2)).toEqual(['https://docs.example.org/heading', 'https://docs.example.org/body']);
  });
});
