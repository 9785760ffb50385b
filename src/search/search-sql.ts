/**
 * The one SQL statement behind keyword, vector and RRF search: candidate rankings as CTEs
 * (each capped at its candidate depth), fused with a full outer join, scored, cut to the
 * limit, and only then joined to segment text and document attribution. One round trip, and
 * the joins touch `limit` rows, not the candidates.
 *
 * - keyword: BM25F over candidates from the GIN index (keyword-sql.ts), or on PGlite the same
 *   ranking made in memory (keyword-memory-index.ts) and passed in as arrays.
 * - vector: cosine distance `embedding::vector(<dims>) <=> $v::vector(<dims>)` over `model = $m`.
 *   Up to `vectorSearchDefaults.exactLimit` vectors every row is scored (an exact ranking, the
 *   same before and after the HNSW index is built); above it the ORDER BY ... LIMIT has the
 *   exact shape of the per-model HNSW expression index of migration 0005, so the index serves
 *   it (test/search-api.test.ts checks the plan with EXPLAIN).
 *   On PGlite the exact ranking is made in memory once the index is filled (segment-memory.ts)
 *   and passed in as arrays.
 * - lsa (RRF only, lsa-index.ts): the corpus LSA's ranking, made in memory and passed in as
 *   arrays like the keyword one; the statement has no LSA join at all without it.
 * - rrf: `score = sum over rankings of weight / (k + rank)`.
 */
import { type RawBuilder, sql } from 'kysely';
import { float8Array, uuidArray } from '../db/array-parameter.js';
import type { KeywordHit } from './keyword-postings.js';
import { type KeywordQuery, keywordCandidatesSql } from './keyword-sql.js';
import type { TextWords } from './rerank.js';
import type { VectorHit } from './vector-memory.js';

export interface KeywordRanking {
  query: KeywordQuery;
  depth: number;
  weight: number;
  /**
   * The ranking already made (keyword-memory-index.ts: the best `depth` segments, as
   * keywordCandidatesSql would give them); the statement then takes it as two arrays.
   */
  ranked?: readonly KeywordHit[] | undefined;
}

export interface VectorRanking {
  vector: Float32Array;
  dimensions: number;
  model: string;
  depth: number;
  weight: number;
  /**
   * `exact`: every row of the model scored, ties broken by segment id, so the ranking depends
   * only on the index contents. A number: that many nearest rows from the HNSW index (at most
   * hnsw.ef_search are returned), ranked exactly among themselves.
   */
  candidates: 'exact' | number;
  /**
   * The exact ranking already made (segment-memory.ts: the best `depth` segments with their
   * distances); the statement then takes it as two arrays and reads no vector.
   */
  ranked?: readonly VectorHit[] | undefined;
}

/** The corpus LSA's segments, best first, and their cosine similarities. */
export interface LsaRanking {
  ranked: readonly { segmentId: string; score: number }[];
  weight: number;
}

export interface SearchSqlOptions {
  keyword?: KeywordRanking | undefined;
  vector?: VectorRanking | undefined;
  lsa?: LsaRanking | undefined;
  /** Execution ids; empty or absent = every source. */
  executionIds?: readonly string[] | undefined;
  /** Only segments indexed in this text search configuration. */
  language?: string | undefined;
  k: number;
  limit: number;
  /** rrf: fused score; keyword or vector: that ranking's raw score. */
  scoring: 'rrf' | 'keyword' | 'vector';
}

/** A segment's columns that a search row shows (the final select below), as memory holds them. */
export interface SegmentRowFields {
  segment_id: string;
  text: string;
  language: string;
  heading_path: string[];
  segment_index: number;
  execution_id: string;
  document_id: string;
  url: string | null;
  source_key: string;
  storage_key: string | null;
  title: string | null;
  /** The document's page identity (search-index/language.ts, copyOf); null before migration 20. */
  page_key: string | null;
  page_language: string | null;
  /** From memory only (segment-memory.ts): the text's words as the rerank scans them. */
  text_words?: TextWords | undefined;
}

export interface SearchRow extends Omit<SegmentRowFields, 'heading_path'> {
  keyword_rank: number | null;
  keyword_raw: number | null;
  vector_rank: number | null;
  vector_raw: number | null;
  /** Present only when the statement had an LSA ranking. */
  lsa_rank?: number | null;
  lsa_raw?: number | null;
  score: number;
  candidates: number;
  /** An array from memory or node-postgres; PGlite may hand it over as its text form. */
  heading_path: string[] | string;
}

export function searchSql(options: SearchSqlOptions): RawBuilder<SearchRow> {
  const { keyword, vector, lsa } = options;
  const executionIds = options.executionIds && options.executionIds.length > 0 ? options.executionIds : null;

  const keywordCte = keyword?.ranked
    ? sql`select * from unnest(${uuidArray(keyword.ranked.map((hit) => hit.segmentId))}::uuid[],
        ${float8Array(keyword.ranked.map((hit) => hit.raw))}::float8[]) as ranked (segment_id, raw)`
    : keyword
      ? keywordCandidatesSql(keyword.query, { executionIds, language: options.language }, keyword.depth)
      : sql`select null::uuid as segment_id, null::float8 as raw where false`;

  let vectorCte = sql`select null::uuid as segment_id, null::float8 as distance where false`;
  if (vector?.ranked) {
    vectorCte = sql`select * from unnest(${uuidArray(vector.ranked.map((hit) => hit.segmentId))}::uuid[],
        ${float8Array(vector.ranked.map((hit) => hit.distance))}::float8[]) as ranked (segment_id, distance)`;
  } else if (vector) {
    if (!Number.isInteger(vector.dimensions) || vector.dimensions < 1) {
      throw new Error(`invalid vector dimensions ${vector.dimensions}`);
    }
    // The dimension count is part of the index expression, so it must be a literal, not a parameter.
    const dims = sql.raw(String(vector.dimensions));
    const literal = `[${Array.from(vector.vector).join(',')}]`;
    const distance = sql`e.embedding::vector(${dims}) <=> ${literal}::vector(${dims})`;
    const rows = sql`from knowledge_embeddings e
        ${options.language ? sql`join knowledge_segments s on s.segment_id = e.segment_id and s.language = ${options.language}` : sql``}
        where e.model = ${vector.model}
          ${executionIds ? sql`and e.execution_id = any(${sql.val([...executionIds])}::text[])` : sql``}`;
    // Exact: "+ 0" keeps the sort key from matching the HNSW index expression, so every row is
    // scored. Approximate: the index's first `candidates` rows, then the same exact order.
    vectorCte =
      vector.candidates === 'exact'
        ? sql`select e.segment_id, (${distance}) + 0 as distance ${rows}
            order by 2, e.segment_id
            limit ${vector.depth}`
        : sql`select segment_id, distance from (
              select e.segment_id, ${distance} as distance ${rows}
              order by ${distance}
              limit ${Math.max(vector.depth, vector.candidates)}
            ) approximate
            order by distance, segment_id
            limit ${vector.depth}`;
  }

  const k = options.k;
  const score =
    options.scoring === 'keyword'
      ? sql`k.raw::float8`
      : options.scoring === 'vector'
        ? sql`v.raw`
        : sql`coalesce(${keyword?.weight ?? 0}::float8 / (${k} + k.rank), 0) + coalesce(${vector?.weight ?? 0}::float8 / (${k} + v.rank), 0)${
            lsa ? sql` + coalesce(${lsa.weight}::float8 / (${k} + l.rank), 0)` : sql``
          }`;

  return sql<SearchRow>`
    with kw as (${keywordCte}),
    kw_ranked as (
      select segment_id, raw, (row_number() over (order by raw desc, segment_id))::int as rank from kw
    ),
    vec as (${vectorCte}),
    vec_ranked as (
      select segment_id, 1 - distance as raw, (row_number() over (order by distance, segment_id))::int as rank from vec
    ),
    ${
      lsa
        ? sql`lsa_ranked as (
      select segment_id, raw, rank::int as rank
      from unnest(${uuidArray(lsa.ranked.map((hit) => hit.segmentId))}::uuid[],
        ${float8Array(lsa.ranked.map((hit) => hit.score))}::float8[]) with ordinality as ranked (segment_id, raw, rank)
    ),`
        : sql``
    }
    fused as (
      select coalesce(k.segment_id, v.segment_id${lsa ? sql`, l.segment_id` : sql``}) as segment_id,
             k.rank as keyword_rank, k.raw::float8 as keyword_raw,
             v.rank as vector_rank, v.raw::float8 as vector_raw,
             ${lsa ? sql`l.rank as lsa_rank, l.raw as lsa_raw,` : sql``}
             ${score} as score,
             (count(*) over ())::int as candidates
      from kw_ranked k full outer join vec_ranked v on v.segment_id = k.segment_id
      ${lsa ? sql`full outer join lsa_ranked l on l.segment_id = coalesce(k.segment_id, v.segment_id)` : sql``}
      order by score desc, segment_id
      limit ${options.limit}
    )
    select f.*, s.text, s.language, s.heading_path, s.segment_index, s.execution_id,
           d.document_id, d.url, d.source_key, d.storage_key, d.title, d.page_key, d.page_language
    from fused f
    join knowledge_segments s on s.segment_id = f.segment_id
    join knowledge_documents d on d.document_id = s.document_id
    order by f.score desc, f.segment_id`;
}
