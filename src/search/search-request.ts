/**
 * What a search request asks for, with the defaults filled in and checked, and which query
 * rewrites (word-vector expansion, glossary translation) apply to it: the decisions of
 * search-service.ts that need no database, each testable on its own.
 */
import { AppError } from '../errors.js';
import { type SearchLanguage, toSearchLanguage } from '../search-index/language.js';
import type { QueryTranslator } from './query-translation.js';
import type { SearchRequest, SearchType } from './search-service.js';

export const searchDefaults = { limit: 10, k: 60, weight: 1, depth: 50 } as const;

/**
 * The vector ranking scores every vector of the model (exactly, ties broken by segment id)
 * while the model has at most `exactLimit` vectors: its ranking then depends only on the
 * index contents, not on whether the HNSW index is built yet or on the random levels of its
 * graph. Above it the HNSW index gives `candidates` rows (hnsw.ef_search's default), ranked
 * exactly among themselves, which still depends on the graph. The limit is where the exact
 * scan stays cheap: embeddings are stored as real[], and each row's cast to vector costs
 * about 18-26 us on PGlite (bench:search: vector p50 175 ms exact against 19 ms HNSW at
 * 10,000 segments, 552 against 23 ms at 20,000, both at load 11-15).
 */
export const vectorRankingDefaults = { exactLimit: 1_000, candidates: 100 } as const;

export interface SearchSettings {
  limit: number;
  k: number;
  /** The vector weight is the request's or the default; a model's own default replaces the latter. */
  weights: { keyword: number; vector: number };
  /** Candidates each ranking contributes. */
  depth: { keyword: number; vector: number };
}

/** The stemmers a query is parsed with, and the language it was found to be in (if any). */
export interface QueryLanguages {
  languages: readonly string[];
  queryLanguage: string | undefined;
}

/** The query, trimmed; empty is refused. */
export function queryOf(request: SearchRequest): string {
  const query = request.query.trim();
  if (query.length === 0) throw new AppError('search_request_invalid', 'query is empty');
  return query;
}

/** The language the request restricts results to, if any; one not supported is refused. */
export function filterLanguageOf(request: SearchRequest): SearchLanguage | undefined {
  if (request.language === undefined) return undefined;
  const filterLanguage = toSearchLanguage(request.language);
  if (!filterLanguage) {
    throw new AppError('search_request_invalid', `unsupported language ${JSON.stringify(request.language)}`);
  }
  return filterLanguage;
}

/** The request's limit, k, weights and candidate depths, defaults filled in. */
export function searchSettings(type: SearchType, request: SearchRequest): SearchSettings {
  const limit = request.limit ?? searchDefaults.limit;
  return {
    limit,
    k: request.k ?? searchDefaults.k,
    weights: {
      keyword: request.weights?.keyword ?? searchDefaults.weight,
      vector: request.weights?.vector ?? searchDefaults.weight,
    },
    depth: {
      keyword: candidateDepth(type === 'keyword', limit, request.candidate_depth?.keyword),
      vector: candidateDepth(type === 'vector', limit, request.candidate_depth?.vector),
    },
  };
}

/** A single ranking never needs more candidates than it returns; a fused one at least as many. */
function candidateDepth(only: boolean, limit: number, requested: number | undefined): number {
  if (only) return limit;
  return Math.max(limit, requested ?? searchDefaults.depth);
}

/**
 * Whether the query gets word-vector expansions: the word vectors are English, so a query in
 * another language, or over an index without English, is not expanded.
 */
export function expandsQuery(
  languages: QueryLanguages | undefined,
  match: 'all' | 'any',
  request: SearchRequest,
): boolean {
  if (!languages || match !== 'any' || request.expand === false) return false;
  return (languages.queryLanguage ?? 'english') === 'english' && languages.languages.includes('english');
}

/**
 * The glossary that translates the query into one of the languages searched: a question in
 * another language than the index's is also searched with the words a glossary gives for its
 * words in the index's language.
 */
export function translatorFor(
  translators: readonly QueryTranslator[],
  languages: QueryLanguages | undefined,
  match: 'all' | 'any',
  request: SearchRequest,
): QueryTranslator | undefined {
  if (!languages || match !== 'any' || request.translate === false) return undefined;
  return translators.find(
    (candidate) => candidate.from === languages.queryLanguage && languages.languages.includes(candidate.to),
  );
}
