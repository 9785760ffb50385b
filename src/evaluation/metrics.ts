/**
 * Retrieval metrics over distinct documents, with binary relevance: a question lists the pages
 * (URLs or object keys) that answer it, and a document is relevant when it is one of them.
 *
 * - hit@k: 1 when a relevant document is among the first k, else 0.
 * - MRR@10: 1 / rank of the first relevant document within the first 10, else 0.
 * - nDCG@10: DCG = sum over ranks i <= 10 of rel_i / log2(i + 1), where rel_i is 1 for a
 *   document that matches an expected entry no earlier document matched (so a page indexed
 *   twice counts once); divided by the ideal DCG of min(expected entries, 10) relevant
 *   documents at the top.
 */

/** Where a ranked result came from: the fields of the search API's `source`. */
export interface ResultSource {
  url: string | null;
  object_key: string | null;
  document_id?: string | undefined;
  title?: string | null | undefined;
}

export interface Metrics {
  hit_at_1: number;
  hit_at_5: number;
  hit_at_10: number;
  mrr_at_10: number;
  ndcg_at_10: number;
}

export const metricNames = ['hit_at_1', 'hit_at_5', 'hit_at_10', 'mrr_at_10', 'ndcg_at_10'] as const;

const CUTOFF = 10;

function withoutFragment(url: string): string {
  const hash = url.indexOf('#');
  return hash < 0 ? url : url.slice(0, hash);
}

function urlPath(url: string): string | undefined {
  try {
    return new URL(url).pathname;
  } catch {
    return undefined;
  }
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * Whether `entry` names this source: equal to its URL (fragment ignored) or object key, or the
 * URL's path or the object key ends with `/` + entry ("routine-vacuuming.html" matches
 * http://host/docs/routine-vacuuming.html).
 */
export function matchesEntry(source: ResultSource, entry: string): boolean {
  const wanted = entry.trim();
  if (wanted.length === 0) return false;
  const suffix = wanted.startsWith('/') ? wanted : `/${wanted}`;
  if (source.url) {
    const url = withoutFragment(source.url);
    if (url === wanted || source.url === wanted) return true;
    const path = urlPath(url);
    if (path && (path.endsWith(suffix) || decoded(path).endsWith(suffix))) return true;
  }
  if (source.object_key) {
    if (source.object_key === wanted || source.object_key.endsWith(suffix)) return true;
  }
  return false;
}

/** The identity of a document: its URL without fragment, else its object key, else its id. */
export function documentKey(source: ResultSource): string {
  if (source.url) return withoutFragment(source.url);
  return source.object_key ?? source.document_id ?? '';
}

/** Ranked segments reduced to distinct documents, each at its first occurrence. */
export function distinctDocuments<T extends ResultSource>(sources: readonly T[]): T[] {
  const seen = new Set<string>();
  const documents: T[] = [];
  for (const source of sources) {
    const key = documentKey(source);
    if (seen.has(key)) continue;
    seen.add(key);
    documents.push(source);
  }
  return documents;
}

/**
 * For each distinct document in rank order, the index of the expected entry it newly matches,
 * or -1 (irrelevant, or matching only entries an earlier document matched).
 */
export function relevance(documents: readonly ResultSource[], expected: readonly string[]): number[] {
  const matched = new Set<number>();
  return documents.map((document) => {
    const entry = expected.findIndex(
      (candidate, index) => !matched.has(index) && matchesEntry(document, candidate),
    );
    if (entry >= 0) matched.add(entry);
    return entry;
  });
}

/** 1-based rank of the first relevant document anywhere in the list, or null. */
export function firstRelevantRank(
  documents: readonly ResultSource[],
  expected: readonly string[],
): number | null {
  const index = documents.findIndex((document) => expected.some((entry) => matchesEntry(document, entry)));
  return index < 0 ? null : index + 1;
}

/** The metrics of one question, from its distinct documents in rank order. */
export function questionMetrics(documents: readonly ResultSource[], expected: readonly string[]): Metrics {
  const top = documents.slice(0, CUTOFF);
  const relevant = relevance(top, expected).map((entry) => entry >= 0);
  const first = relevant.indexOf(true);
  const hitWithin = (k: number) => (first >= 0 && first < k ? 1 : 0);
  let dcg = 0;
  relevant.forEach((isRelevant, index) => {
    if (isRelevant) dcg += 1 / Math.log2(index + 2);
  });
  let ideal = 0;
  for (let index = 0; index < Math.min(new Set(expected).size, CUTOFF); index++)
    ideal += 1 / Math.log2(index + 2);
  return {
    hit_at_1: hitWithin(1),
    hit_at_5: hitWithin(5),
    hit_at_10: hitWithin(10),
    mrr_at_10: first >= 0 ? 1 / (first + 1) : 0,
    ndcg_at_10: ideal > 0 ? dcg / ideal : 0,
  };
}

/** The mean of each metric over questions; zeros for none. */
export function meanMetrics(all: readonly Metrics[]): Metrics {
  const mean = (name: keyof Metrics) =>
    all.length === 0 ? 0 : all.reduce((sum, metrics) => sum + metrics[name], 0) / all.length;
  return {
    hit_at_1: mean('hit_at_1'),
    hit_at_5: mean('hit_at_5'),
    hit_at_10: mean('hit_at_10'),
    mrr_at_10: mean('mrr_at_10'),
    ndcg_at_10: mean('ndcg_at_10'),
  };
}

/** Nearest-rank percentile (p in 0..100) of the values; 0 for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1] as number;
}
