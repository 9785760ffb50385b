/**
 * Retrieval strategies for chat (spec 4.3 rule 3):
 * - merge: a vector search per source, all in parallel; similarities scaled by each source's
 *   weight, merged, best first.
 * - sequential: sources in the given order, a vector search each, keeping passages at or above
 *   `min_score`, until `limit` passages are collected.
 * - ensemble: one RRF search (vector + keyword) over the selected sources.
 * - keyword: full-text only; the one strategy that works without pgvector.
 * Without sources, merge and sequential search everything once.
 */
import type { SearchResult, SearchService } from '../search/search-service.js';

export type RetrievalStrategy = 'merge' | 'sequential' | 'ensemble' | 'keyword';

export interface RetrievalOptions {
  strategy: RetrievalStrategy;
  query: string;
  sources: readonly string[];
  sourceWeights: Readonly<Record<string, number>>;
  limit: number;
  minScore: number;
  embeddingModel?: string | undefined;
  language?: string | undefined;
}

export async function retrieve(
  search: SearchService,
  options: RetrievalOptions,
  signal?: AbortSignal,
): Promise<SearchResult[]> {
  const base = {
    query: options.query,
    limit: options.limit,
    embedding_model: options.embeddingModel,
    language: options.language,
    // A question is not a keyword query: any of its words may match (stop words drop out).
    match: 'any' as const,
  };
  const searchIn = async (type: 'vector' | 'keyword' | 'rrf', sources: readonly string[] | undefined) =>
    (await search.search(type, { ...base, sources }, signal)).results;

  switch (options.strategy) {
    case 'keyword':
      return searchIn('keyword', options.sources);
    case 'ensemble':
      return searchIn('rrf', options.sources);
    case 'merge': {
      if (options.sources.length === 0) return searchIn('vector', undefined);
      const perSource = await Promise.all(
        options.sources.map(async (source) => {
          const weight = options.sourceWeights[source] ?? 1;
          const results = await searchIn('vector', [source]);
          return results.map((result) => ({ ...result, score: result.score * weight }));
        }),
      );
      return dedupe(perSource.flat().sort((a, b) => b.score - a.score))
        .slice(0, options.limit)
        .map(renumber);
    }
    case 'sequential': {
      const collected: SearchResult[] = [];
      const order = options.sources.length === 0 ? [undefined] : options.sources.map((source) => [source]);
      for (const sources of order) {
        const results = await searchIn('vector', sources);
        for (const result of results) {
          if (result.score >= options.minScore) collected.push(result);
          if (collected.length >= options.limit) return dedupe(collected).map(renumber);
        }
      }
      return dedupe(collected).map(renumber);
    }
  }
}

function dedupe(results: SearchResult[]): SearchResult[] {
  const seen = new Set<string>();
  return results.filter((result) => !seen.has(result.segment_id) && seen.add(result.segment_id));
}

function renumber(result: SearchResult, index: number): SearchResult {
  return { ...result, rank: index + 1 };
}
