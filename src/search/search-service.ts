/**
 * Keyword, vector and RRF search over the knowledge index (spec 4.3). Validates a request
 * (search-request.ts: defaults, candidate depths, which query rewrites apply), picks the query
 * language and embedding model, runs the one statement of `search-sql.ts`,
 * and shapes rows into RRFSearchResponse results with source attribution and the per-ranking
 * component breakdown.
 *
 * Query language: the request's `language` (which also restricts results to segments in that
 * language). Otherwise the index's dominant language (one holding at least
 * `dominantLanguageShare` of the segments), or every language present when none dominates, so
 * "bilene" still reaches Norwegian segments stemmed to "bil"; and a query whose own language
 * is detected with confidence is parsed in that language too, with its stop words kept out of
 * the other parses.
 */

import { type Kysely, sql } from 'kysely';
import { sessionSettings } from '../db/database.js';
import { pgvectorInstalled } from '../db/pgvector.js';
import type { DatabaseSchema } from '../db/schema.js';
import type { EmbedderCatalog } from '../embedding/embedder.js';
import { searchStarted } from '../search-index/search-activity.js';
import { createModelResolver } from './embedding-model.js';
import type { KeywordMemoryIndex } from './keyword-memory-index.js';
import type { KeywordFilters, KeywordQuery } from './keyword-sql.js';
import { preferQueryLanguage } from './language-preference.js';
import type { LsaIndex } from './lsa-index.js';
import type { LsaListOutcome } from './lsa-list.js';
import { createNorwegianSpellings } from './norwegian-spellings.js';
import type { QueryExpander } from './query-expansion.js';
import { createQueryLanguages, dominantLanguageShare } from './query-languages.js';
import { rewrite } from './query-rewrite.js';
import type { QueryTranslator } from './query-translation.js';
import { type ReaderCopyOptions, withReaderCopies } from './reader-copies.js';
import { type RerankWeights, rerank, rerankDefaults } from './rerank.js';
import {
  filterLanguageOf,
  queryOf,
  searchDefaults,
  searchSettings,
  vectorRankingDefaults,
} from './search-request.js';
import { headingPathOf, present } from './search-result.js';
import {
  type KeywordRanking,
  type LsaRanking,
  type SearchRow,
  type SearchSqlOptions,
  searchSql,
  type VectorRanking,
} from './search-sql.js';
import { createTextAnalyzer, type TextAnalyzer } from './text-analysis.js';

export type SearchType = 'rrf' | 'keyword' | 'vector';

export interface SearchRequest {
  query: string;
  limit?: number | undefined;
  sources?: readonly string[] | undefined;
  language?: string | undefined;
  /** any (default): a natural-language query, any of its words may match; all: websearch syntax, every term. */
  match?: 'all' | 'any' | undefined;
  /** With match any: add indexed words near the query's English words in meaning (default true). */
  expand?: boolean | undefined;
  /** With match any: search a query in another language than the index's with a glossary's translations of its words (default true). */
  translate?: boolean | undefined;
  /** RRF: re-score the first fused candidates on proximity, phrases, names, headings and position (default true). */
  rerank?: boolean | undefined;
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
  /** What opens the source: `url` when http(s), else the stored object's API path (`sourceLink`), else null. */
  link: string | null;
  title: string | null;
  heading_path: string[];
}

export interface RankingComponent {
  ranking: 'keyword' | 'vector' | 'lsa';
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

export { searchDefaults };

export interface SearchService {
  search(type: SearchType, request: SearchRequest, signal?: AbortSignal): Promise<SearchResponse>;
  /** True when pgvector is installed (vector and RRF search can run). */
  vectorSupport(): Promise<boolean>;
  /** Texts analysed as keyword search analyses the index, parsed in `languages`. */
  analyzer(languages: readonly string[]): TextAnalyzer;
}

/** A language holding this share of the segments is the only one a query of unknown language is parsed in. */
export { dominantLanguageShare };

export function createSearchService(deps: {
  db: Kysely<DatabaseSchema>;
  embedders: EmbedderCatalog | undefined;
  /** Word-vector query expansion for English queries; absent = none. */
  expander?: QueryExpander | undefined;
  /** Glossary translation of queries into the index's language; absent = none. */
  translators?: readonly QueryTranslator[] | undefined;
  /** The rerank's weights (rerank.ts); absent = rerankDefaults.weights. For tuning them. */
  rerankWeights?: RerankWeights | undefined;
  /** Vectors up to which a model is ranked exactly; absent = vectorRankingDefaults.exactLimit. For benchmarks. */
  exactVectorLimit?: number | undefined;
  /** The keyword ranking in memory (PGlite only, keyword-memory-index.ts; the same ranking); absent = SQL. */
  keywordIndex?: KeywordMemoryIndex | undefined;
  /** The corpus LSA, RRF's third list (WEIR_SEARCH_LSA=on, lsa-index.ts); absent = none, as before it existed. */
  lsa?: LsaIndex | undefined;
}): SearchService {
  const { db, embedders, rerankWeights } = deps;
  const exactVectorLimit = deps.exactVectorLimit ?? vectorRankingDefaults.exactLimit;
  let vectorSupport: Promise<boolean> | undefined;

  function hasVectorSupport(): Promise<boolean> {
    vectorSupport ??= pgvectorInstalled(db).catch((error: unknown) => {
      vectorSupport = undefined;
      throw error;
    });
    return vectorSupport;
  }

  const queryLanguagesFor = createQueryLanguages(db);
  const norwegianSpellings = createNorwegianSpellings({ db });

  const resolveModel = createModelResolver(db, embedders, hasVectorSupport);

  const service: SearchService = {
    vectorSupport: hasVectorSupport,
    analyzer: (languages) => createTextAnalyzer(db, languages),

    async search(type, request, signal) {
      const started = performance.now();
      const query = queryOf(request);
      const filterLanguage = filterLanguageOf(request);
      const { limit, k, weights, depth } = searchSettings(type, request);
      beginSearch(deps);

      const match = request.match ?? 'any';
      const keywordLanguages = type !== 'vector' ? await queryLanguagesFor(query, filterLanguage) : undefined;

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
        ...(keywordLanguages
          ? {
              query_languages: keywordLanguages.languages,
              detected_language: keywordLanguages.detected ?? null,
            }
          : {}),
        language: filterLanguage ?? null,
        match,
        sources: request.sources ?? [],
      };

      const vectorRanking = vectorRankingOf(
        model,
        queryVector,
        depth.vector,
        weights.vector,
        exactVectorLimit,
      );
      const rewriters = { ...deps, spellings: norwegianSpellings };
      const rewritten = await rewrite(rewriters, query, request, keywordLanguages, parameters);
      const { expansions, translated, spellings } = rewritten;
      const keywordQuery: KeywordQuery | undefined = keywordLanguages && {
        text: query,
        otherLanguagesText: translated?.untranslated,
        languages: keywordLanguages.languages,
        queryLanguage: keywordLanguages.queryLanguage,
        match,
        expansions: [...expansions, ...(translated?.translations ?? []), ...spellings],
      };
      const keywordRanking = keywordQuery
        ? { query: keywordQuery, depth: depth.keyword, weight: weights.keyword }
        : undefined;
      // RRF fetches the rerank's candidates, re-scores them (rerank.ts), puts the reader's
      // language first among copies of a page, and only then cuts to the limit.
      const reranks = type === 'rrf' && request.rerank !== false;
      parameters.rerank = reranks;
      if (vectorRanking) parameters.vector_ranking = vectorRanking.candidates === 'exact' ? 'exact' : 'hnsw';
      let rows: SearchRow[] = [];
      let lsa: LsaListOutcome | undefined;
      const filters = filtersOf(request, filterLanguage);
      if (keywordRanking || vectorRanking) {
        let ranked = await rankInMemory(deps.keywordIndex, keywordRanking, request, filterLanguage);
        if (keywordRanking) parameters.keyword_ranking = ranked ? 'memory' : 'sql';
        if (deps.lsa && type === 'rrf' && keywordRanking) {
          const terms = { translations: [...(translated?.translations ?? []), ...spellings], expansions };
          lsa = await deps.lsa.list({
            db,
            query,
            keyword: keywordRanking,
            keywordRanked: ranked,
            filters,
            ...terms,
          });
          ranked ??= lsa.keywordRanked;
          reportLsa(parameters, lsa, weights);
        }
        rows = await rankedRows({
          db,
          index: deps.keywordIndex,
          keyword: keywordRanking && { ...keywordRanking, ranked },
          vector: vectorRanking,
          model,
          lsa: lsa?.lsa,
          request,
          language: filterLanguage,
          fusion: { k, limit: type === 'rrf' ? Math.max(limit, rerankDepth) : limit, scoring: type },
          parameters,
        });
        if (reranks) rows = rerankRows(query, rows, k, rerankWeights);
        const reader = { language: filterLanguage ?? keywordLanguages?.queryLanguage, filters };
        const detected = filterLanguage === undefined;
        const copies = { db, index: deps.keywordIndex, limit, query: keywordQuery, detected, ...reader };
        rows = await oneCopyPerPage(rows, copies, parameters);
      }
      return {
        query,
        search_type: type,
        results: rows.map((row, index) =>
          present(row, index, type, k, { ...weights, lsa: lsa?.lsa?.weight ?? 0 }),
        ),
        total: rows[0]?.candidates ?? 0,
        took_ms: Math.round((performance.now() - started) * 100) / 100,
        parameters,
      };
    },
  };
  return withSearchActivity(db, service);
}

/**
 * Searches tell when they begin and end: on PGlite a model's HNSW build waits until none is in
 * progress and none began for a while (src/engine/vector-index-builds.ts).
 */
function withSearchActivity(db: Kysely<DatabaseSchema>, service: SearchService): SearchService {
  return {
    ...service,
    search(type, request, signal) {
      const ended = searchStarted(db);
      return service.search(type, request, signal).finally(ended);
    },
  };
}

/**
 * The fused rows, best first. On PGlite, with both rankings made in memory and every row held
 * there, no statement runs (segment-memory.ts); else the search statement, given whatever
 * ranking memory made as arrays. `parameters` says which (`vector_ranking`, `rows`).
 */
async function rankedRows(options: {
  db: Kysely<DatabaseSchema>;
  index: KeywordMemoryIndex | undefined;
  keyword: KeywordRanking | undefined;
  vector: VectorRanking | undefined;
  model: { indexed?: { vectors: number; countedAt: number } | undefined } | undefined;
  lsa: LsaRanking | undefined;
  request: SearchRequest;
  language: string | undefined;
  fusion: Pick<SearchSqlOptions, 'k' | 'limit' | 'scoring'>;
  parameters: Record<string, unknown>;
}): Promise<SearchRow[]> {
  const { index, keyword, vector, lsa, request, language, fusion, parameters } = options;
  const vectorRanked = await nearestInMemory(index, vector, options.model, request, language);
  if (vectorRanked) parameters.vector_ranking = 'memory';
  const fused =
    index && !lsa && (!keyword || keyword.ranked) && (!vector || vectorRanked)
      ? index.fuse({
          ...fusion,
          keyword: keyword?.ranked && { hits: keyword.ranked, weight: keyword.weight },
          vector: vector && vectorRanked && { hits: vectorRanked, weight: vector.weight },
        })
      : undefined;
  parameters.rows = fused ? 'memory' : 'sql';
  if (fused) return fused;
  return runSearch(
    options.db,
    searchSql({
      ...fusion,
      keyword,
      vector: vector && { ...vector, ranked: vectorRanked },
      lsa,
      executionIds: request.sources,
      language,
    }),
    // An exact ranking does not use HNSW, so needs none of its settings.
    vector && !vectorRanked && vector.candidates !== 'exact' ? vector.candidates : undefined,
    (request.sources?.length ?? 0) > 0 || !!language,
  );
}

/**
 * Runs the search statement. With a vector ranking, HNSW returns at most `hnsw.ef_search`
 * rows, which every connection sets to `sessionSettings.hnswEfSearch` (database.ts); a deeper
 * ranking raises it, and with filters pgvector's iterative scan keeps walking the graph until
 * enough rows pass them. Both are then local to a transaction so they never leak to other
 * queries on the connection; the default depth needs neither, nor the transaction's round trips.
 */
async function runSearch(
  db: Kysely<DatabaseSchema>,
  statement: ReturnType<typeof searchSql>,
  vectorDepth: number | undefined,
  filtered: boolean,
): Promise<SearchRow[]> {
  if (vectorDepth === undefined || (vectorDepth <= sessionSettings.hnswEfSearch && !filtered)) {
    return (await statement.execute(db)).rows;
  }
  return db.transaction().execute(async (transaction) => {
    await sql`select set_config('hnsw.ef_search', ${String(Math.min(1000, Math.max(40, vectorDepth)))}, true)${
      filtered ? sql`, set_config('hnsw.iterative_scan', 'strict_order', true)` : sql``
    }`.execute(transaction);
    return (await statement.execute(transaction)).rows;
  });
}

/**
 * What a valid search starts before it waits for anything. The in-memory index's fill, before
 * the search's language detection and query expansion wait (the first stems every vector word):
 * filled by the time the first searches rank, they rank from memory instead of each running the
 * SQL statement on PGlite's one session (issue 35); idle, nothing is held.
 */
function beginSearch(deps: { keywordIndex?: KeywordMemoryIndex | undefined }) {
  deps.keywordIndex?.startFilling();
}

/** The vector ranking; none for a configured model with nothing indexed yet (no rows to rank, no HNSW index). */
function vectorRankingOf(
  model:
    | {
        indexed?: { dimensions: number; vectors: number; vector_index: string | null } | undefined;
        embedder: { name: string };
      }
    | undefined,
  queryVector: Float32Array | undefined,
  depth: number,
  weight: number,
  exactVectorLimit: number,
): VectorRanking | undefined {
  if (!model?.indexed || !queryVector) return undefined;
  const { dimensions, vectors } = model.indexed;
  // Without its graph (not built yet: on PGlite it waits for a quiet moment,
  // src/engine/vector-index-builds.ts) every vector is scored, as the statement would anyway.
  const candidates =
    vectors <= exactVectorLimit || !model.indexed.vector_index
      ? ('exact' as const)
      : Math.max(depth, vectorRankingDefaults.candidates);
  return { vector: queryVector, dimensions, model: model.embedder.name, depth, weight, candidates };
}

/** Whether RRF fused the LSA list, or why not, and its weight beside the others'. */
function reportLsa(parameters: Record<string, unknown>, lsa: LsaListOutcome, weights: object) {
  parameters.lsa_ranking = lsa.state;
  if (lsa.lsa) parameters.weights = { ...weights, lsa: lsa.lsa.weight };
}

/**
 * The reader's copy of a page only its translations held (reader-copies.ts), then one copy of a
 * page, the reader's, the others below (language-preference.ts), cut to the limit.
 */
async function oneCopyPerPage(
  rows: SearchRow[],
  options: ReaderCopyOptions,
  parameters: Record<string, unknown>,
): Promise<SearchRow[]> {
  const copies = await withReaderCopies(rows, options);
  parameters.reader_copies_fetched = copies.fetched;
  return preferQueryLanguage(copies.rows, options.language).slice(0, options.limit);
}

/** The request's filters as the rankings take them: its sources (none = every one) and language. */
function filtersOf(request: SearchRequest, language: string | undefined): KeywordFilters {
  return { executionIds: request.sources?.length ? request.sources : null, language };
}

/** On PGlite, the keyword ranking from memory when it can give it (else undefined: the SQL statement ranks). */
function rankInMemory(
  index: KeywordMemoryIndex | undefined,
  ranking: { query: KeywordQuery; depth: number } | undefined,
  request: SearchRequest,
  language: string | undefined,
) {
  if (!index || !ranking) return Promise.resolve(undefined);
  return index.rank(ranking.query, filtersOf(request, language), ranking.depth);
}

/**
 * On PGlite, the exact vector ranking from memory when it holds the model's vectors, as many
 * as the database has (else undefined: the statement ranks, exactly or through HNSW).
 */
function nearestInMemory(
  index: KeywordMemoryIndex | undefined,
  ranking: VectorRanking | undefined,
  model: { indexed?: { vectors: number; countedAt: number } | undefined } | undefined,
  request: SearchRequest,
  language: string | undefined,
) {
  if (!index || !ranking || !model?.indexed) return Promise.resolve(undefined);
  return index.nearest(
    ranking.model,
    ranking.vector,
    ranking.depth,
    filtersOf(request, language),
    model.indexed,
  );
}

const rerankDepth = rerankDefaults.depth;

/** The rows reranked (rerank.ts), their heading paths parsed for it. */
function rerankRows(query: string, rows: SearchRow[], k: number, weights: RerankWeights | undefined) {
  const candidates = rows.map((row) => ({
    ...row,
    score: Number(row.score),
    heading_path: headingPathOf(row),
  }));
  return rerank(query, candidates, { k, weights });
}
