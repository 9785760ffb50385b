/**
 * Candidate rerank features that bench/page-features.ts measures beside the service's
 * (src/search/rerank.ts), none of them in the service: page-level aggregation over the 50
 * fused candidates and over a deeper keyword list, the page's length, and agreement of the
 * question with the title and headings (by word keys that include the glossary's translations,
 * and softly through the shipped English word vectors). Each is in [0, 1].
 */
import type { WordVectors } from '../../src/embedding/word-vectors.js';

/** The shipped vectors with every row read into memory: this bench compares many words a question. */
export type WordVectorsInMemory = Pick<WordVectors, 'words' | 'dimensions' | 'indexOf'> & {
  vectors: Float32Array;
};

export interface PageCandidate {
  segment_id: string;
  document_id: string;
  score: number;
  keyword_raw: number | null;
  text: string;
  title: string | null;
  heading_path: readonly string[];
}

/** What the service knew of the query: its word-vector expansions and glossary translations. */
export interface QueryRewrites {
  expansions: readonly string[];
  translations: readonly string[];
  /** The detected language is English or none: the question's own words have English vectors. */
  english: boolean;
}

export const pageFeatureNames = [
  'pagesum',
  'pagefrac',
  'pagesqrt',
  'shortpage',
  'shortlog',
  'deep_count',
  'deep_countsqrt',
  'deep_kwsum',
  'deep_kwmaxplus',
  'headq',
  'headqx',
  'titleq',
  'headvec',
  'titlevec',
  'page_headvec',
  'cover',
  'page_cover',
] as const;
export type PageFeatureName = (typeof pageFeatureNames)[number];
export type PageFeatures = Record<PageFeatureName, number>;

const STOP = new Set(
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with how do i can my what which when where why who does should me we you your from get make use using used want way one all any some more than so its'.split(
    ' ',
  ),
);
const WORD = /[\p{L}\p{N}_]+/gu;
const wordsOf = (text: string) => (text.toLowerCase().match(WORD) ?? []).filter((word) => !STOP.has(word));
/** The rerank's matching key: a plural s dropped, then the first five characters. */
const keyOf = (word: string) => {
  const singular = word.length > 3 && word.endsWith('s') ? word.slice(0, -1) : word;
  return singular.length > 5 ? singular.slice(0, 5) : singular;
};

/** Each document's value normalised by the largest. */
function normalised(values: ReadonlyMap<string, number>): (document: string) => number {
  const top = Math.max(1e-9, ...values.values());
  return (document) => (values.get(document) ?? 0) / top;
}

/** Set cosine of the query's keys and a text's keys. */
function agreement(queryKeys: ReadonlySet<string>, keys: ReadonlySet<string>): number {
  if (queryKeys.size === 0 || keys.size === 0) return 0;
  let shared = 0;
  for (const key of keys) if (queryKeys.has(key)) shared++;
  return shared / Math.sqrt(queryKeys.size * keys.size);
}

/**
 * Soft agreement through word vectors: for each query word its best cosine with a target
 * word, averaged with rarer words (later in the vectors' frequency order) counting more.
 */
function softAgreement(
  vectors: WordVectorsInMemory | undefined,
  queryWords: readonly string[],
  target: string[],
) {
  if (!vectors) return 0;
  const { dimensions } = vectors;
  const rowOf = (word: string) => vectors.indexOf(word);
  const targetRows = [...new Set(target)].map(rowOf).filter((row): row is number => row !== undefined);
  const queryRows = queryWords.map(rowOf).filter((row): row is number => row !== undefined);
  if (queryRows.length === 0 || targetRows.length === 0) return 0;
  let sum = 0;
  let weights = 0;
  for (const row of queryRows) {
    let best = 0;
    for (const other of targetRows) {
      let dot = 0;
      for (let i = 0; i < dimensions; i++)
        dot +=
          (vectors.vectors[row * dimensions + i] as number) *
          (vectors.vectors[other * dimensions + i] as number);
      best = Math.max(best, dot);
    }
    const weight = Math.log(2 + row) / Math.log(2 + vectors.words.length);
    sum += weight * best;
    weights += weight;
  }
  return sum / weights;
}

/** Per document: the segments of the deep keyword list and their BM25 scores. */
function deepPages(pool: readonly PageCandidate[]) {
  const scores = new Map<string, number[]>();
  for (const candidate of pool)
    if (candidate.keyword_raw !== null)
      scores.set(candidate.document_id, [
        ...(scores.get(candidate.document_id) ?? []),
        candidate.keyword_raw,
      ]);
  const sum = new Map([...scores].map(([document, list]) => [document, list.reduce((a, b) => a + b, 0)]));
  // The best segment and 0.3 of the others: a page's evidence without letting length decide.
  const maxPlus = new Map(
    [...scores].map(([document, list]) => {
      const sorted = [...list].sort((a, b) => b - a);
      return [document, (sorted[0] ?? 0) + 0.3 * sorted.slice(1).reduce((a, b) => a + b, 0)];
    }),
  );
  return { scores, sum: normalised(sum), maxPlus: normalised(maxPlus) };
}

/**
 * The features of the first `head` candidates; `pool`: a deeper fused list (keyword depth 200)
 * of the same query; `pageSegments`: each document's segment count in the index.
 */
export function pageFeatures(
  question: string,
  rewrites: QueryRewrites,
  head: readonly PageCandidate[],
  pool: readonly PageCandidate[],
  pageSegments: ReadonlyMap<string, number>,
  vectors: WordVectorsInMemory | undefined,
): PageFeatures[] {
  const questionWords = wordsOf(question);
  const queryKeys = new Set([...questionWords.map(keyOf), ...rewrites.translations.map(keyOf)]);
  const expandedKeys = new Set([...queryKeys, ...rewrites.expansions.map(keyOf)]);
  const vectorWords = [...new Set([...(rewrites.english ? questionWords : []), ...rewrites.translations])];
  const fusedSum = new Map<string, number>();
  const inHead = new Map<string, number>();
  const pageKeys = new Map<string, Set<string>>();
  for (const candidate of head) {
    const document = candidate.document_id;
    fusedSum.set(document, (fusedSum.get(document) ?? 0) + candidate.score);
    inHead.set(document, (inHead.get(document) ?? 0) + 1);
    const keys = pageKeys.get(document) ?? new Set<string>();
    for (const word of wordsOf([candidate.title ?? '', ...candidate.heading_path, candidate.text].join(' ')))
      if (queryKeys.has(keyOf(word))) keys.add(keyOf(word));
    pageKeys.set(document, keys);
  }
  const pageSum = normalised(fusedSum);
  const deep = deepPages(pool);
  const perSegment = head.map((candidate) => {
    const document = candidate.document_id;
    const total = pageSegments.get(document) ?? 1;
    const count = inHead.get(document) ?? 1;
    const deepCount = deep.scores.get(document)?.length ?? 1;
    const noNumbers = (words: string[]) => words.filter((word) => !/^\d+$/.test(word));
    const titleWords = noNumbers(wordsOf(candidate.title ?? ''));
    const headingWords = noNumbers(wordsOf([candidate.title ?? '', ...candidate.heading_path].join(' ')));
    const headingKeys = new Set(headingWords.map(keyOf));
    const segmentKeys = new Set(
      wordsOf([candidate.title ?? '', ...candidate.heading_path, candidate.text].join(' ')).map(keyOf),
    );
    let covered = 0;
    for (const key of queryKeys) if (segmentKeys.has(key)) covered++;
    return {
      pagesum: pageSum(document),
      pagefrac: count / total,
      pagesqrt: Math.min(1, (count - 1) / 4 / Math.sqrt(total)),
      shortpage: 1 / Math.sqrt(total),
      shortlog: 1 / (1 + Math.log(total)),
      deep_count: Math.min(1, (deepCount - 1) / 8),
      deep_countsqrt: Math.min(1, (deepCount - 1) / 4 / Math.sqrt(total)),
      deep_kwsum: deep.sum(document),
      deep_kwmaxplus: deep.maxPlus(document),
      headq: agreement(queryKeys, headingKeys),
      headqx: agreement(expandedKeys, headingKeys),
      titleq: agreement(queryKeys, new Set(titleWords.map(keyOf))),
      headvec: softAgreement(vectors, vectorWords, headingWords),
      titlevec: softAgreement(vectors, vectorWords, titleWords),
      page_headvec: 0,
      cover: queryKeys.size > 0 ? covered / queryKeys.size : 0,
      page_cover: queryKeys.size > 0 ? (pageKeys.get(document)?.size ?? 0) / queryKeys.size : 0,
    };
  });
  // A page's heading agreement: the best of its candidate segments'.
  const bestHeading = new Map<string, number>();
  head.forEach((candidate, index) => {
    const value = (perSegment[index] as PageFeatures).headvec;
    bestHeading.set(candidate.document_id, Math.max(bestHeading.get(candidate.document_id) ?? 0, value));
  });
  return perSegment.map((features, index) => ({
    ...features,
    page_headvec: bestHeading.get((head[index] as PageCandidate).document_id) ?? 0,
  }));
}
