import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../db/database.js';
import {
  createKnowledgeIndex,
  type DocumentSegments,
  type KnowledgeIndex,
} from '../search-index/knowledge-index.js';
import { createKeywordMemoryIndex, type KeywordMemoryIndex } from './keyword-memory-index.js';
import {
  type Bm25Parameters,
  type KeywordFilters,
  type KeywordQuery,
  keywordCandidatesSql,
} from './keyword-sql.js';

/** The repository's own docs, one segment per paragraph under its heading: real English text. */
async function docsCorpus(): Promise<DocumentSegments[]> {
  const directory = path.resolve('docs');
  const files = (await readdir(directory)).filter((file) => file.endsWith('.md')).sort();
  const entries: DocumentSegments[] = [];
  for (const [position, file] of files.entries()) {
    const text = await readFile(path.join(directory, file), 'utf8');
    let heading = file;
    const segments = text
      .split(/\n\s*\n/)
      .filter((paragraph) => {
        if (!paragraph.startsWith('#')) return paragraph.trim().length > 0;
        heading = paragraph.replace(/^#+\s*/, '').split('\n')[0] as string;
        return false;
      })
      .slice(0, 60)
      .map((paragraph, segmentIndex) => ({
        segmentIndex,
        text: paragraph,
        tokenCount: paragraph.split(/\s+/).length,
        headingPath: [heading],
      }));
    entries.push({
      document: {
        sourceKey: `http://127.0.0.1/${file}`,
        url: `http://127.0.0.1/${file}`,
        title: file.replace(/\.md$/, ''),
        language: 'english',
        executionId: position % 3 === 0 ? 'execution-a' : 'execution-b',
      },
      segments,
    });
  }
  entries.push({
    document: {
      sourceKey: 'http://127.0.0.1/norsk',
      title: 'Søk og indeksering',
      language: 'norwegian',
      executionId: 'execution-a',
    },
    segments: [
      'Søket bruker indeksen for å finne dokumentene raskt.',
      'Hvordan setter jeg opp en indeks på flere kolonner i tabellen?',
      "Sikkerhetskopier tas med pg_dump; en 'kopi' kan gjenopprettes.",
    ].map((text, segmentIndex) => ({ segmentIndex, text, tokenCount: 9, headingPath: ['Søk'] })),
  });
  return entries;
}

const questions = [
  'How does the search rank segments?',
  'webhook delivery retries and signatures',
  'pipeline',
  'the',
  'index',
  'How do I configure the embedded database?',
  'vector embeddings HNSW index build',
  'Hvordan setter jeg opp en indeks?',
  "pg_dump 'kopi' backslash \\ quote",
  'nothing matches zyxxyz',
];

function keywordQuery(text: string, extra: Partial<KeywordQuery> = {}): KeywordQuery {
  return { text, languages: ['english', 'norwegian'], match: 'any', ...extra };
}

async function sqlRanking(database: Database, query: KeywordQuery, filters: KeywordFilters, depth: number) {
  const rows = (await keywordCandidatesSql(query, filters, depth).execute(database.db)).rows as {
    segment_id: string;
    raw: number;
  }[];
  return rows.map((row) => ({ segmentId: row.segment_id, raw: Number(row.raw) }));
}

describe('the keyword index in memory', () => {
  let dataDir: string;
  let database: Database;
  let knowledge: KnowledgeIndex;
  let memory: KeywordMemoryIndex;
  const everything: KeywordFilters = { executionIds: null, language: undefined };

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'weir-keyword-memory-'));
    database = await openDatabase({ dataDir, pgliteThread: 'main' });
    knowledge = createKnowledgeIndex(database.db);
    await knowledge.indexDocuments(await docsCorpus());
    memory = createKeywordMemoryIndex(database.db);
    await memory.ready();
  }, 120_000);
  afterAll(async () => {
    await database?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  async function expectSameAsSql(query: KeywordQuery, filters: KeywordFilters, depth: number) {
    const expected = await sqlRanking(database, query, filters, depth);
    const actual = await memory.rank(query, filters, depth);
    expect(actual, query.text).toEqual(expected);
    return expected;
  }

  it('ranks every question as the SQL statement does: same segments, same order, same scores', async () => {
    expect(memory.size().segments).toBeGreaterThan(500);
    let nonEmpty = 0;
    for (const text of questions) {
      const ranking = await expectSameAsSql(keywordQuery(text), everything, 100);
      if (ranking.length > 0) nonEmpty++;
    }
    expect(nonEmpty).toBeGreaterThanOrEqual(8);
  });

  it('answers as SQL with expansions, a known query language, filters and both candidate rules', async () => {
    const expansions = [
      { lexeme: 'rank', weight: 0.6 },
      { lexeme: 'score', weight: 0.45 },
      { lexeme: 'search', weight: 1 },
    ];
    await expectSameAsSql(keywordQuery('find relevant pages', { expansions }), everything, 50);
    await expectSameAsSql(
      keywordQuery('hvordan setter jeg opp indeks', { queryLanguage: 'norwegian' }),
      everything,
      50,
    );
    await expectSameAsSql(
      keywordQuery('search results'),
      { executionIds: ['execution-a'], language: undefined },
      50,
    );
    await expectSameAsSql(keywordQuery('indeks tabellen'), { executionIds: null, language: 'norwegian' }, 50);
    // A tiny budget: every query word is over it, so candidates hold the two rarest together.
    const tight: Partial<Bm25Parameters> = { candidateBudget: 3 };
    const both = await expectSameAsSql(
      keywordQuery('search index segments', { parameters: tight }),
      everything,
      50,
    );
    expect(both.length).toBeGreaterThan(0);
  });

  it('leaves to SQL what only the database can order: more candidates than it scores, and match all', async () => {
    const few: Partial<Bm25Parameters> = { maxCandidates: 5 };
    expect(await memory.rank(keywordQuery('the index', { parameters: few }), everything, 50)).toBeUndefined();
    expect(await memory.rank(keywordQuery('index', { match: 'all' }), everything, 50)).toBeUndefined();
  });

  it('stays current: a segment added is found, a trimmed or deleted source is gone', async () => {
    const word = 'quuxotically';
    const document = {
      sourceKey: 'http://127.0.0.1/new-page',
      title: 'New page',
      language: 'english' as const,
      executionId: 'execution-c',
    };
    await knowledge.indexDocuments([
      {
        document,
        segments: [0, 1].map((segmentIndex) => ({
          segmentIndex,
          text: `a ${word} written segment ${segmentIndex}`,
          tokenCount: 5,
          headingPath: [],
        })),
      },
    ]);
    await memory.ready();
    const added = await expectSameAsSql(keywordQuery(word), everything, 10);
    expect(added).toHaveLength(2);

    await knowledge.indexDocuments([{ document, segments: [], total: 1 }]);
    await memory.ready();
    expect(await expectSameAsSql(keywordQuery(word), everything, 10)).toHaveLength(1);

    expect(await knowledge.removeDocuments([document.sourceKey])).toBe(1);
    await memory.ready();
    expect(await memory.rank(keywordQuery(word), everything, 10)).toEqual([]);
    // The statistics moved with it: the questions still rank as SQL does.
    await expectSameAsSql(keywordQuery(questions[0] as string), everything, 100);
  });

  it('notices a write that sent no notice (plain SQL) and is filled anew instead of answering stale', async () => {
    const query = keywordQuery(questions[0] as string);
    const [first] = await sqlRanking(database, query, everything, 1);
    await sql`delete from knowledge_segments where segment_id = ${first?.segmentId}::uuid`.execute(
      database.db,
    );
    // The statistics disagree with what the index holds: the SQL path answers, and a fill starts.
    expect(await memory.rank(query, everything, 100)).toBeUndefined();
    await memory.ready();
    const after = await expectSameAsSql(query, everything, 100);
    expect(after.map((hit) => hit.segmentId)).not.toContain(first?.segmentId);
  });

  it('is filled anew from the database after a restart', async () => {
    const before = await sqlRanking(database, keywordQuery(questions[1] as string), everything, 100);
    await database.close();
    database = await openDatabase({ dataDir, pgliteThread: 'main' });
    knowledge = createKnowledgeIndex(database.db);
    memory = createKeywordMemoryIndex(database.db);
    // Before the fill the SQL path answers; the call starts the fill.
    expect(await memory.rank(keywordQuery(questions[1] as string), everything, 100)).toBeUndefined();
    await memory.ready();
    expect(await memory.rank(keywordQuery(questions[1] as string), everything, 100)).toEqual(before);
  }, 60_000);
});
