/**
 * Embedded keyword ranking from memory (issue 35). PGlite runs one statement at a time, and
 * BM25F over GIN candidates was most of a search's database time, so 50 concurrent clients
 * queued behind it. This index holds the postings in memory (keyword-postings.ts) and ranks
 * exactly as keyword-sql.ts; the database still parses the query (its text search
 * configurations are the only stemmers). Beside the postings it holds each segment's row and
 * vectors (segment-memory.ts), so that an RRF search can rank vectors exactly and fuse
 * without the search statement; when it cannot, the statement takes what memory ranked as
 * arrays (search-sql.ts).
 *
 * The database is the source of truth. The index is filled from it on the first search (that
 * search, and any before the fill ends, is answered by the SQL path, so idle memory and
 * start-up are unchanged), and every write path that changes segments tells it which
 * documents changed (search-index/segment-changes.ts), after which it re-reads those
 * documents' segments before answering again; each embedding upsert likewise names its
 * segments, whose vectors it re-reads. A restart fills it anew. Changes heard while
 * it is filling are re-read when the fill ends. Each search compares the database's N, average
 * length and document frequencies with the index's: a write it never heard of (plain SQL)
 * shows there, and a new fill starts. The server path (PostgreSQL) does not use it.
 */
import { type Kysely, sql } from 'kysely';
import { realArrayFromBinary, uuidArray } from '../db/array-parameter.js';
import type { DatabaseSchema } from '../db/schema.js';
import { onEmbeddingsChanged, onSegmentsChanged } from '../search-index/segment-changes.js';
import { type KeywordHit, KeywordPostings } from './keyword-postings.js';
import {
  type AddressedSegment,
  type KeywordFilters,
  type KeywordQuery,
  type PageLookup,
  type QueryTerm,
  queryTermsSql,
} from './keyword-sql.js';
import type { SearchRow } from './search-sql.js';
import { type FusionOptions, fuseInMemory, SegmentMemory, type SegmentRowFields } from './segment-memory.js';
import { parseTsvectorText } from './tsvector-text.js';
import type { VectorHit } from './vector-memory.js';

export interface KeywordMemoryIndex {
  /**
   * The best `depth` segments, as keyword-sql.ts ranks them; undefined when the SQL path must
   * answer: not filled yet (this call starts the fill), `match: all` (websearch syntax), more
   * candidates than the SQL path scores, or the index failed.
   */
  rank(query: KeywordQuery, filters: KeywordFilters, depth: number): Promise<KeywordHit[] | undefined>;
  /**
   * The exact vector ranking of a model (segment-memory.ts), or undefined when the database
   * must rank: not filled, or holding another count of the model's vectors than the database
   * counted (`expected`) after the index last changed them: a write it never heard of (plain
   * SQL), after which a new fill starts. A count taken before its last change may be behind it.
   */
  nearest(
    model: string,
    query: Float32Array,
    depth: number,
    filters: KeywordFilters,
    expected: { vectors: number; countedAt: number },
  ): Promise<VectorHit[] | undefined>;
  /**
   * addressedSegmentsSql's rows from memory: the segments of the documents at these addresses,
   * each with its BM25F score for the query (reader-copies.ts); undefined when the database
   * must answer (not filled, or its statistics are not the index's).
   */
  addressed(
    query: KeywordQuery | undefined,
    addresses: readonly string[],
    filters: KeywordFilters,
    pages?: PageLookup,
  ): Promise<AddressedSegment[] | undefined>;
  /** The search statement's rows from memory (fuseInMemory); undefined when a row is not held. */
  fuse(options: FusionOptions): SearchRow[] | undefined;
  /** Starts the fill if not started; resolves when it and every change heard so far are applied. */
  ready(): Promise<void>;
  /** Starts the fill if not started, without waiting for it (a failed fill leaves the SQL path answering). */
  startFilling(): void;
  /** Segments, lexemes and postings held (0 before the fill), and the vectors held. */
  size(): { segments: number; lexemes: number; postings: number; vectors: number };
}

/** Segments read per statement while filling: each statement holds PGlite's one session briefly. */
const FILL_BATCH = 2000;

interface SegmentRow extends SegmentRowFields {
  token_count: number;
  vector: string | null;
}

/** One fill of the index and what happened to it; a refill starts a new one. */
interface Generation {
  postings: KeywordPostings;
  /** Rows and vectors, for an RRF search without the search statement. */
  memory: SegmentMemory;
  state: 'filling' | 'ready' | 'failed';
  /** Documents changed while filling, re-read when it ends. */
  heardWhileFilling: Set<string>;
  /** Segments whose vectors were written while filling, re-read when it ends. */
  vectorsHeardWhileFilling: Set<string>;
  /** Date.now() when vectors were last added or dropped (a database count older than this may lag). */
  vectorsChangedAt: number;
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
  onEmbeddingsChanged(db, (segmentIds) => {
    const generation = current;
    if (generation?.state === 'filling')
      for (const id of segmentIds) generation.vectorsHeardWhileFilling.add(id);
    else if (generation?.state === 'ready')
      applied = applied.then(() => rereadVectors(generation, segmentIds));
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
        sql`where s.document_id = any(${uuidArray([...documentIds])}::uuid[])`,
      );
      const vectors = await vectorRows(
        db,
        rows.map((row) => row.segment_id),
      );
      generation.postings.removeDocuments(documentIds);
      generation.memory.removeDocuments(documentIds);
      hold(generation, rows, vectors);
    } catch {
      fail(generation);
    }
  }

  async function rereadVectors(generation: Generation, segmentIds: readonly string[]): Promise<void> {
    if (generation.state !== 'ready') return;
    try {
      const vectors = await vectorRows(db, segmentIds);
      for (const segmentId of segmentIds) generation.memory.removeVectors(segmentId);
      hold(generation, [], vectors);
    } catch {
      fail(generation);
    }
  }

  async function fillFromDatabase(generation: Generation): Promise<void> {
    let after: string | undefined;
    for (;;) {
      const rows = await segmentRows(
        db,
        after === undefined ? sql`` : sql`where s.segment_id > ${after}::uuid`,
        sql`order by s.segment_id limit ${FILL_BATCH}`,
      );
      const vectors = await vectorRows(
        db,
        rows.map((row) => row.segment_id),
      );
      if (generation !== current) return;
      hold(generation, rows, vectors);
      if (rows.length < FILL_BATCH) break;
      after = rows[rows.length - 1]?.segment_id;
    }
    generation.state = 'ready';
    const heard = [...generation.heardWhileFilling];
    generation.heardWhileFilling.clear();
    if (heard.length > 0) await reread(generation, heard);
    const heardVectors = [...generation.vectorsHeardWhileFilling];
    generation.vectorsHeardWhileFilling.clear();
    if (heardVectors.length > 0) await rereadVectors(generation, heardVectors);
  }

  /** A new, empty generation, filled in the background. */
  function startFill(): Generation {
    const generation: Generation = {
      postings: new KeywordPostings(),
      memory: new SegmentMemory(),
      state: 'filling',
      heardWhileFilling: new Set(),
      vectorsHeardWhileFilling: new Set(),
      vectorsChangedAt: Date.now(),
      filled: Promise.resolve(),
    };
    current = generation;
    generation.filled = fillFromDatabase(generation).catch(() => fail(generation));
    return generation;
  }

  return {
    ready: () => (current ?? startFill()).filled.then(() => applied),
    startFilling: () => {
      current ?? startFill();
    },
    size: () => ({
      ...(current?.postings.size ?? { segments: 0, lexemes: 0, postings: 0 }),
      vectors: current?.memory.size.vectors ?? 0,
    }),
    async nearest(model, query, depth, filters, expected) {
      const generation = current ?? startFill();
      if (generation.state !== 'ready') return undefined;
      await applied;
      if (generation.state !== 'ready' || generation !== current) return undefined;
      // A count older than the index's last change may lag behind it: memory, told of every
      // write, is then the more current. A newer count that differs means a write it missed.
      if (
        generation.memory.vectorCount(model) !== expected.vectors &&
        expected.countedAt > generation.vectorsChangedAt
      ) {
        startFill();
        return undefined;
      }
      return generation.memory.nearest(model, query, depth, filters);
    },
    async addressed(query, addresses, filters, pages) {
      const generation = current;
      if (generation?.state !== 'ready') return undefined;
      await applied;
      const terms = query && (await queryTermsOf(db, query));
      await applied;
      if (generation.state !== 'ready' || generation !== current) return undefined;
      return addressedInMemory(generation, terms, query, addresses, filters, pages);
    },
    fuse(options) {
      const generation = current;
      if (generation?.state !== 'ready') return undefined;
      return fuseInMemory(generation.memory, options);
    },
    async rank(query, filters, depth) {
      const generation = current ?? startFill();
      if (generation.state !== 'ready' || query.match === 'all') return undefined;
      await applied;
      const terms = await queryTermsOf(db, query);
      await applied;
      if (generation.state !== 'ready' || generation !== current) return undefined;
      const outcome = generation.postings.rank(terms, filters, depth, query.parameters);
      // A write that no notice reported (plain SQL on the tables): fill anew from the database.
      if (outcome.hits === undefined && outcome.reason === 'stale') startFill();
      return outcome.hits;
    },
  };
}

/** The database's terms of a query rank() was given, so a later addressed() of it runs no statement. */
const termsOf = new WeakMap<KeywordQuery, { db: Kysely<DatabaseSchema>; terms: QueryTerm[] }>();

async function queryTermsOf(db: Kysely<DatabaseSchema>, query: KeywordQuery): Promise<QueryTerm[]> {
  const known = termsOf.get(query);
  if (known?.db === db) return known.terms;
  const terms = await readQueryTerms(db, query);
  termsOf.set(query, { db, terms });
  return terms;
}

/** The database's terms of a query (queryTermsSql), as the postings take them. */
async function readQueryTerms(db: Kysely<DatabaseSchema>, query: KeywordQuery): Promise<QueryTerm[]> {
  const rows = (await queryTermsSql(query).execute(db)).rows;
  return rows.map((row) => ({
    lexeme: row.lexeme,
    weight: Number(row.weight),
    df: Number(row.df),
    idf: Number(row.idf),
    n: Number(row.n),
    average_length: Number(row.average_length),
  }));
}

/**
 * The addressed documents' segments with their scores (addressedSegmentsSql's rows); undefined
 * when the statistics differ from the database's: a write no notice reported (rank() refills).
 */
function addressedInMemory(
  generation: Generation,
  terms: readonly QueryTerm[] | undefined,
  query: KeywordQuery | undefined,
  addresses: readonly string[],
  filters: KeywordFilters,
  pages: PageLookup | undefined,
): AddressedSegment[] | undefined {
  const rows = generation.memory.addressed(addresses, filters, pages);
  const segmentIds = rows.map((row) => row.segment_id);
  const scores = terms ? generation.postings.score(terms, segmentIds, query?.parameters) : new Map();
  if (!scores) return undefined;
  return rows.map(({ text_words: _, ...row }) => ({ ...row, raw: scores.get(row.segment_id) ?? 0 }));
}

async function segmentRows(
  db: Kysely<DatabaseSchema>,
  where: ReturnType<typeof sql>,
  tail: ReturnType<typeof sql> = sql``,
): Promise<SegmentRow[]> {
  const result = await sql<SegmentRow>`
    select s.segment_id, s.document_id, s.token_count, s.language, s.execution_id, s.search_vector::text as vector,
      s.text, s.heading_path, s.segment_index, d.url, d.source_key, d.storage_key, d.title,
      d.page_key, d.page_language
    from knowledge_segments s join knowledge_documents d on d.document_id = s.document_id
    ${where} ${tail}`.execute(db);
  return result.rows;
}

interface VectorRow {
  segment_id: string;
  model: string;
  execution_id: string;
  /**
   * `array_send(embedding)` in base64: the float32s' own bytes (realArrayFromBinary). PGlite
   * answers in text: a real[] comes as decimals parsed one by one, a bytea as hex parsed in
   * JavaScript; base64, which Node decodes natively, cost a quarter of the decimals' CPU (57
   * against 200 ms for 2,000 x 384 in PGlite; the hex 440).
   */
  embedding: string;
}

/** The vectors of these segments, every model. */
async function vectorRows(db: Kysely<DatabaseSchema>, segmentIds: readonly string[]): Promise<VectorRow[]> {
  if (segmentIds.length === 0) return [];
  const result = await sql<VectorRow>`
    select segment_id, model, execution_id, encode(array_send(embedding), 'base64') as embedding
    from knowledge_embeddings
    where segment_id = any(${uuidArray([...segmentIds])}::uuid[])`.execute(db);
  return result.rows;
}

/** Segments (postings and rows) and vectors read from the database, into the generation. */
function hold(generation: Generation, rows: readonly SegmentRow[], vectors: readonly VectorRow[]): void {
  generation.vectorsChangedAt = Date.now();
  for (const row of rows) {
    generation.postings.add(segmentOf(row));
    generation.memory.setRow(rowFieldsOf(row));
  }
  for (const vector of vectors) {
    generation.memory.setVector({
      segmentId: vector.segment_id,
      model: vector.model,
      executionId: vector.execution_id,
      vector: realArrayFromBinary(Buffer.from(vector.embedding, 'base64')),
    });
  }
}

function rowFieldsOf(row: SegmentRow): SegmentRowFields {
  const headingPath = typeof row.heading_path === 'string' ? JSON.parse(row.heading_path) : row.heading_path;
  return {
    segment_id: row.segment_id,
    text: row.text,
    language: row.language,
    heading_path: Array.isArray(headingPath) ? headingPath : [],
    segment_index: Number(row.segment_index),
    execution_id: row.execution_id,
    document_id: row.document_id,
    url: row.url,
    source_key: row.source_key,
    storage_key: row.storage_key,
    title: row.title,
    page_key: row.page_key,
    page_language: row.page_language,
  };
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
