/**
 * Keyword, vector and RRF search over the knowledge index (spec 4.3). Validates a request,
 * picks the query language and embedding model, runs the one statement of `search-sql.ts`,
 * and shapes rows into RRFSearchResponse results with source attribution and the per-ranking
 * component breakdown.
 *
 * Query language: the request's `language` (which also restricts results to segments in that
 * language); otherwise `detectLanguage(query)`; and when detection finds no language (short
 * queries usually), the query is parsed by the stemmer of every language present in the index
 * and the tsqueries are OR-ed, so "bilene" still reaches Norwegian segments stemmed to "bil".
 */
import { type Kysely, sql } from 'kysely';
import type { DatabaseSchema } from '../db/schema.js';
import type { EmbedderCatalog } from '../embedding/embedder.js';
import { AppError } from '../errors.js';
import { detectLanguage, type SearchLanguage, toSearchLanguage } from '../knowledge/language.js';
import { type SearchRow, searchSql, tsqueryFor } from './search-sql.js';

export type SearchType = 'rrf' | 'keyword' | 'vector';

export interface SearchRequest {
  query: string;
  limit?: number | undefined;
  sources?: readonly string[] | undefined;
  language?: string | undefined;
  /** all: websearch syntax as typed; any: the words OR-ed (for natural-language questions). */
  match?: 'all' | 'any' | undefined;
  embedding_model?: string | undefined;
  k?: number | undefined;
  weights?: { keyword?: number | undefined; vector?: number | undefined } | undefined;
  candidate_depth?: { keyword?: number | undefined; vector?: number | undefined } | undefined;
}

export interface SourceAttribution {
  execution_id: string;
  document_id: string;
  url: string | null;
  object_key: string | null;
  title: string | null;
  heading_path: string[];
}

export interface RankingComponent {
  ranking: 'keyword' | 'vector';
  rank: number | null;
  raw_score: number | null;
  weight: number;
  contribution: number;
}

export interface SearchResult {
  segment_id: string;
  rank: number;
  score: number;
  text: string;
  language: string | null;
  source: SourceAttribution;
  components: RankingComponent[];
}

export interface SearchResponse {
  query: string;
  search_type: SearchType;
  results: SearchResult[];
  total: number;
  took_ms: number;
  parameters: Record<string, unknown>;
}

export const searchDefaults = { limit: 10, k: 60, weight: 1, depth: 50 } as const;

export interface SearchService {
  search(type: SearchType, request: SearchRequest, signal?: AbortSignal): Promise<SearchResponse>;
  /** True when pgvector is installed (vector and RRF search can run). */
  vectorSupport(): Promise<boolean>;
}

const LANGUAGE_CACHE_MS = 30_000;

export function createSearchService(deps: {
  db: Kysely<DatabaseSchema>;
  embedders: EmbedderCatalog | undefined;
}): SearchService {
  const { db, embedders } = deps;
  let vectorSupport: Promise<boolean> | undefined;
  let languageCache: { at: number; languages: Promise<string[]> } | undefined;

  function hasVectorSupport(): Promise<boolean> {
    vectorSupport ??= sql<{
      present: boolean;
    }>`select exists (select 1 from pg_extension where extname = 'vector') as present`
      .execute(db)
      .then((result) => Boolean(result.rows[0]?.present))
      .catch((error: unknown) => {
        vectorSupport = undefined;
        throw error;
      });
    return vectorSupport;
  }

  /** Languages of the indexed segments, cached briefly: a distinct over every segment is not free. */
  function presentLanguages(): Promise<string[]> {
    if (!languageCache || Date.now() - languageCache.at > LANGUAGE_CACHE_MS) {
      const languages = sql<{ language: string }>`select distinct language from knowledge_segments`
        .execute(db)
        .then((result) => result.rows.map((row) => row.language));
      languageCache = { at: Date.now(), languages };
      languages.catch(() => {
        languageCache = undefined;
      });
    }
    return languageCache.languages;
  }

  async function resolveModel(requested: string | undefined) {
    if (!embedders || embedders.names.length === 0) {
      throw new AppError('search_unavailable', 'no embedding model is configured (setting embedding_models)');
    }
    const name = requested ?? embedders.defaultModel;
    const embedder = embedders.get(name);
    if (!embedder) {
      throw new AppError(
        'search_request_invalid',
        `unknown embedding model ${JSON.stringify(name)}; configured: ${embedders.names.join(', ')}`,
      );
    }
    if (!(await hasVectorSupport())) {
      throw new AppError(
        'vector_search_unavailable',
        'vector search needs the pgvector extension, which this PostgreSQL server does not have: install pgvector, use the embedded database, or use keyword search',
      );
    }
    const indexed = await db
      .selectFrom('knowledge_models')
      .selectAll()
      .where('model', '=', name)
      .executeTakeFirst();
    if (indexed && indexed.dimensions !== embedder.dimensions) {
      throw new AppError(
        'search_unavailable',
        `embedding model ${name} is configured with ${embedder.dimensions} dimensions but indexed with ${indexed.dimensions}`,
      );
    }
    return { embedder, indexed };
  }

  return {
    vectorSupport: hasVectorSupport,

    async search(type, request, signal) {
      const started = performance.now();
      const query = request.query.trim();
      if (query.length === 0) throw new AppError('search_request_invalid', 'query is empty');
      let filterLanguage: SearchLanguage | undefined;
      if (request.language !== undefined) {
        filterLanguage = toSearchLanguage(request.language);
        if (!filterLanguage) {
          throw new AppError(
            'search_request_invalid',
            `unsupported language ${JSON.stringify(request.language)}`,
          );
        }
      }
      const limit = request.limit ?? searchDefaults.limit;
      const k = request.k ?? searchDefaults.k;
      const weights = {
        keyword: request.weights?.keyword ?? searchDefaults.weight,
        vector: request.weights?.vector ?? searchDefaults.weight, // or the model's own default, below
      };
      // A single ranking never needs more candidates than it returns.
      const depth = {
        keyword:
          type === 'keyword'
            ? limit
            : Math.max(limit, request.candidate_depth?.keyword ?? searchDefaults.depth),
        vector:
          type === 'vector'
            ? limit
            : Math.max(limit, request.candidate_depth?.vector ?? searchDefaults.depth),
      };

      let queryLanguages: string[] = [];
      let detected: SearchLanguage | undefined;
      if (type !== 'vector') {
        if (filterLanguage) queryLanguages = [filterLanguage];
        else {
          detected = detectLanguage(query);
          queryLanguages = detected !== 'simple' ? [detected] : await presentLanguages();
          if (queryLanguages.length === 0) queryLanguages = ['simple'];
        }
      }

      let model: Awaited<ReturnType<typeof resolveModel>> | undefined;
      let queryVector: Float32Array | undefined;
      if (type !== 'keyword') {
        model = await resolveModel(request.embedding_model);
        [queryVector] = await model.embedder.embed([query], signal);
        weights.vector = request.weights?.vector ?? model.embedder.rrfWeight ?? searchDefaults.weight;
      }
      const parameters: Record<string, unknown> = {
        limit,
        ...(type === 'rrf' ? { k, weights, candidate_depth: depth } : {}),
        ...(type !== 'keyword' ? { embedding_model: model?.embedder.name } : {}),
        ...(type !== 'vector'
          ? { query_languages: queryLanguages, detected_language: detected ?? null }
          : {}),
        language: filterLanguage ?? null,
        match: request.match ?? 'all',
        sources: request.sources ?? [],
      };

      // A configured model with nothing indexed yet has no rows to rank (and no HNSW index).
      const vectorRanking =
        model?.indexed && queryVector
          ? {
              vector: queryVector,
              dimensions: model.indexed.dimensions,
              model: model.embedder.name,
              depth: depth.vector,
              weight: weights.vector,
            }
          : undefined;
      const keywordRanking =
        type !== 'vector'
          ? {
              tsquery: tsqueryFor(request.match === 'any' ? anyWordQuery(query) : query, queryLanguages),
              depth: depth.keyword,
              weight: weights.keyword,
            }
          : undefined;
      let rows: SearchRow[] = [];
      if (keywordRanking || vectorRanking) {
        const statement = searchSql({
          keyword: keywordRanking,
          vector: vectorRanking,
          executionIds: request.sources,
          language: filterLanguage,
          k,
          limit,
          scoring: type,
        });
        rows = await runSearch(
          db,
          statement,
          vectorRanking?.depth,
          (request.sources?.length ?? 0) > 0 || !!filterLanguage,
        );
      }
      return {
        query,
        search_type: type,
        results: rows.map((row, index) => present(row, index, type, k, weights)),
        total: rows[0]?.candidates ?? 0,
        took_ms: Math.round((performance.now() - started) * 100) / 100,
        parameters,
      };
    },
  };
}

/**
 * Runs the search statement. With a vector ranking, HNSW returns at most `hnsw.ef_search`
 * rows (default 40), so it is raised to the candidate depth; with filters, pgvector's
 * iterative scan keeps walking the graph until enough rows pass them. Both are local to a
 * transaction so they never leak to other queries on the connection.
 */
async function runSearch(
  db: Kysely<DatabaseSchema>,
  statement: ReturnType<typeof searchSql>,
  vectorDepth: number | undefined,
  filtered: boolean,
): Promise<SearchRow[]> {
  if (vectorDepth === undefined) return (await statement.execute(db)).rows;
  return db.transaction().execute(async (transaction) => {
    await sql`select set_config('hnsw.ef_search', ${String(Math.min(1000, Math.max(40, vectorDepth)))}, true)${
      filtered ? sql`, set_config('hnsw.iterative_scan', 'strict_order', true)` : sql``
    }`.execute(transaction);
    return (await statement.execute(transaction)).rows;
  });
}

/** The query's words joined by websearch `or`: ts_rank_cd still ranks segments matching more of them higher. */
export function anyWordQuery(query: string): string {
  const words = query.match(/[\p{L}\p{N}_]+/gu) ?? [];
  return words.filter((word) => word.toLowerCase() !== 'or').join(' or ');
}

function present(
  row: SearchRow,
  index: number,
  type: SearchType,
  k: number,
  weights: { keyword: number; vector: number },
): SearchResult {
  const component = (ranking: 'keyword' | 'vector'): RankingComponent => {
    const rank = ranking === 'keyword' ? row.keyword_rank : row.vector_rank;
    const raw = ranking === 'keyword' ? row.keyword_raw : row.vector_raw;
    const weight = type === 'rrf' ? weights[ranking] : 1;
    return {
      ranking,
      rank,
      raw_score: raw === null ? null : Number(raw),
      weight,
      contribution: rank === null ? 0 : type === 'rrf' ? weight / (k + rank) : Number(raw),
    };
  };
  const components = type === 'rrf' ? [component('keyword'), component('vector')] : [component(type)];
  const headingPath = typeof row.heading_path === 'string' ? JSON.parse(row.heading_path) : row.heading_path;
  return {
    segment_id: row.segment_id,
    rank: index + 1,
    score: Number(row.score),
    text: row.text,
    language: row.language,
    source: {
      execution_id: row.execution_id,
      document_id: row.document_id,
      url: row.url,
      // Content without a URL (files, stored objects) is identified by its object key.
      object_key: row.storage_key ?? (row.url ? null : row.source_key),
      title: row.title,
      heading_path: Array.isArray(headingPath) ? headingPath : [],
    },
    components,
  };
}
