/**
 * Embedded keyword ranking from memory (issue 35). PGlite runs one statement at a time, and
 * BM25F over GIN candidates was most of a search's database time, so 50 concurrent clients
 * queued behind it. This index holds the postings in memory (keyword-postings.ts) and ranks
 * exactly as keyword-sql.ts; the database still parses the query (its text search
 * configurations are the only stemmers), and still runs the vector ranking, the fusion and
 * the row fetch, given the keyword ranking as two arrays (search-sql.ts).
 *
 * The database is the source of truth. The index is filled from it on the first search (that
 * search, and any before the fill ends, is answered by the SQL path, so idle memory and
 * start-up are unchanged), and every write path that changes segments tells it which
 * documents changed (search-index/segment-changes.ts), after which it re-reads those
 * documents' segments before answering again. A restart fills it anew. Changes heard while
 * it is filling are re-read when the fill ends. Each search compares the database's N, average
 * length and document frequencies with the index's: a write it never heard of (plain SQL)
 * shows there, and a new fill starts. The server path (PostgreSQL) does not use it.
 */
import { type Kysely, sql } from 'kysely';
import { uuidArray } from '../db/array-parameter.js';
import type { DatabaseSchema } from '../db/schema.js';
import { onSegmentsChanged } from '../search-index/segment-changes.js';
import { type KeywordHit, KeywordPostings } from './keyword-postings.js';
import { type KeywordFilters, type KeywordQuery, queryTermsSql } from './keyword-sql.js';
import { parseTsvectorText } from './tsvector-text.js';

export interface KeywordMemoryIndex {
  /**
   * The best `depth` segments, as keyword-sql.ts ranks them; undefined when the SQL path must
   * answer: not filled yet (this call starts the fill), `match: all` (websearch syntax), more
   * candidates than the SQL path scores, or the index failed.
   */
  rank(query: KeywordQuery, filters: KeywordFilters, depth: number): Promise<KeywordHit[] | undefined>;
  /** Starts the fill if not started; resolves when it and every change heard so far are applied. */
  ready(): Promise<void>;
  /** Segments, lexemes and postings held (0 before the fill). */
  size(): { segments: number; lexemes: number; postings: number };
}

/** Segments read per statement while filling: each statement holds PGlite's one session briefly. */
const FILL_BATCH = 2000;

interface SegmentRow {
  segment_id: string;
  document_id: string;
  token_count: number;
  language: string;
  execution_id: string;
  vector: string | null;
}

/** One fill of the index and what happened to it; a refill starts a new one. */
interface Generation {
  postings: KeywordPostings;
  state: 'filling' | 'ready' | 'failed';
  /** Documents changed while filling, re-read when it ends. */
  heardWhileFilling: Set<string>;
  filled: Promise<void>;
}

export function createKeywordMemoryIndex(db: Kysely<DatabaseSchema>): KeywordMemoryIndex {
  let current: Generation | undefined;
  /** Re-reads run one after another; a search waits for those already asked for. */
  let applied: Promise<void> = Promise.resolve();

  onSegmentsChanged(db, (documentIds) => {
    const generation = current;
    if (generation?.state === 'filling') for (const id of documentIds) generation.heardWhileFilling.add(id);
    else if (generation?.state === 'ready') applied = applied.then(() => reread(generation, documentIds));
  });

  // A failed read (the database closing under it) leaves the index behind: the SQL path answers from then on.
  function fail(generation: Generation) {
    generation.state = 'failed';
  }

  async function reread(generation: Generation, documentIds: readonly string[]): Promise<void> {
    if (generation.state !== 'ready') return;
    try {
      const rows = await segmentRows(
        db,
        sql`where document_id = any(${uuidArray([...documentIds])}::uuid[])`,
      );
      generation.postings.removeDocuments(documentIds);
      for (const row of rows) generation.postings.add(segmentOf(row));
    } catch {
      fail(generation);
    }
  }

  async function fillFromDatabase(generation: Generation): Promise<void> {
    let after: string | undefined;
    for (;;) {
      const rows = await segmentRows(
        db,
        after === undefined ? sql`` : sql`where segment_id > ${after}::uuid`,
        sql`order by segment_id limit ${FILL_BATCH}`,
      );
      if (generation !== current) return;
      for (const row of rows) generation.postings.add(segmentOf(row));
      if (rows.length < FILL_BATCH) break;
      after = rows[rows.length - 1]?.segment_id;
    }
    generation.state = 'ready';
    const heard = [...generation.heardWhileFilling];
    generation.heardWhileFilling.clear();
    if (heard.length > 0) await reread(generation, heard);
  }

  /** A new, empty generation, filled in the background. */
  function startFill(): Generation {
    const generation: Generation = {
      postings: new KeywordPostings(),
      state: 'filling',
      heardWhileFilling: new Set(),
      filled: Promise.resolve(),
    };
    current = generation;
    generation.filled = fillFromDatabase(generation).catch(() => fail(generation));
    return generation;
  }

  return {
    ready: () => (current ?? startFill()).filled.then(() => applied),
    size: () => current?.postings.size ?? { segments: 0, lexemes: 0, postings: 0 },
    async rank(query, filters, depth) {
      const generation = current ?? startFill();
      if (generation.state !== 'ready' || query.match === 'all') return undefined;
      await applied;
      const rows = (await queryTermsSql(query).execute(db)).rows;
      await applied;
      if (generation.state !== 'ready' || generation !== current) return undefined;
      const terms = rows.map((row) => ({
        lexeme: row.lexeme,
        weight: Number(row.weight),
        df: Number(row.df),
        idf: Number(row.idf),
        n: Number(row.n),
        average_length: Number(row.average_length),
      }));
      const outcome = generation.postings.rank(terms, filters, depth, query.parameters);
      // A write that no notice reported (plain SQL on the tables): fill anew from the database.
      if (outcome.hits === undefined && outcome.reason === 'stale') startFill();
      return outcome.hits;
    },
  };
}

async function segmentRows(
  db: Kysely<DatabaseSchema>,
  where: ReturnType<typeof sql>,
  tail: ReturnType<typeof sql> = sql``,
): Promise<SegmentRow[]> {
  const result = await sql<SegmentRow>`
    select segment_id, document_id, token_count, language, execution_id, search_vector::text as vector
    from knowledge_segments ${where} ${tail}`.execute(db);
  return result.rows;
}

function segmentOf(row: SegmentRow) {
  return {
    segmentId: row.segment_id,
    documentId: row.document_id,
    tokenCount: Number(row.token_count),
    language: row.language,
    executionId: row.execution_id,
    lexemes: parseTsvectorText(row.vector ?? ''),
  };
}
