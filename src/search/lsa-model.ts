/**
 * A semantic half learned from the indexed corpus itself (issue 34): latent semantic analysis
 * over the segments, and a question's ranking in it with pseudo-relevance ("Rocchio") feedback
 * from the keyword ranking's first segments. Pure functions of the segments' texts, shared by
 * the service (lsa-worker.ts builds, lsa-index.ts ranks) and bench:corpus-lsa, which chose
 * every constant in `lsaDefaults` on the dev split of bench/questions/postgres-docs.jsonl.
 *
 * - Terms: each segment's text, with its page title and headings counted twice, through the
 *   English analyzer (english-analyzer.ts: Porter stems, Lucene's stop words); terms in at
 *   least 2 segments.
 * - Weights: (1 + ln tf) x ln(N / df), each segment's row at unit length.
 * - A truncated SVD (truncated-svd.ts), A = U S V^T; a segment's vector is its row of U S, at
 *   unit length; a question's is q V from its weighted terms (idf applied), "folded in".
 */
import { stemmer } from 'stemmer';
import { analyzeEnglish } from './english-analyzer.js';
import {
  type CsrMatrix,
  csrFromRows,
  type SvdOptions,
  type TruncatedSvd,
  truncatedSvd,
} from './truncated-svd.js';

export const lsaDefaults = {
  rank: 200,
  /** Terms in fewer segments are left out (they relate no two segments). */
  minDocumentFrequency: 2,
  /** Keyword segments whose vectors feed back into the question's, and their mean's weight. */
  feedback: 3,
  feedbackWeight: 0.5,
  /** A word-vector expansion's weight among the question's terms (a translation has its own). */
  expansionWeight: 0.3,
  /** The LSA list's weight in RRF (keyword 1, a hash model 0.05) and the segments it gives. */
  weight: 0.2,
  depth: 50,
} as const;

/** What orders the segments in the matrix. */
export interface LsaOrderKey {
  source_key: string;
  segment_index: number;
  segment_id: string;
}

/**
 * Segments enter the matrix by page (its source key) and position on it, the id breaking ties:
 * with terms in code-unit order, the matrix, so the random sketch's rows and the SVD, depend on
 * what the corpus holds and not on the ids an ingestion drew.
 */
export function compareLsaSegments(a: LsaOrderKey, b: LsaOrderKey): number {
  if (a.source_key !== b.source_key) return a.source_key < b.source_key ? -1 : 1;
  if (a.segment_index !== b.segment_index) return a.segment_index - b.segment_index;
  return a.segment_id < b.segment_id ? -1 : a.segment_id > b.segment_id ? 1 : 0;
}

/** What LSA reads of a segment. */
export interface LsaText {
  title: string | null;
  headings: readonly string[];
  text: string;
}

export interface TermSegmentMatrix {
  /** Segments x terms. */
  matrix: CsrMatrix;
  /** A term's column. */
  terms: Map<string, number>;
  idf: Float64Array;
}

/** The weighted term-segment matrix of `segments`, in their order (compareLsaSegments), terms in code-unit order. */
export function termSegmentMatrix(segments: readonly LsaText[]): TermSegmentMatrix {
  const n = segments.length;
  const vocabulary = new Map<string, number>();
  const df: number[] = [];
  const counts = segments.map((segment) => {
    const tf = new Map<string, number>();
    for (const t of analyzeEnglish(segment.text)) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const t of analyzeEnglish([segment.title ?? '', ...segment.headings].join(' ')))
      tf.set(t, (tf.get(t) ?? 0) + 2);
    for (const t of tf.keys()) {
      let c = vocabulary.get(t);
      if (c === undefined) {
        c = df.length;
        vocabulary.set(t, c);
        df.push(0);
      }
      df[c] = (df[c] as number) + 1;
    }
    return tf;
  });
  const terms = new Map<string, number>();
  const shared = [...vocabulary].filter(([, c]) => (df[c] as number) >= lsaDefaults.minDocumentFrequency);
  for (const [t] of shared.sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) terms.set(t, terms.size);
  const idf = new Float64Array(terms.size);
  for (const [t, c] of terms) idf[c] = Math.log(n / (df[vocabulary.get(t) as number] as number));
  const rows = counts.map((tf) => {
    const cols: number[] = [];
    const vals: number[] = [];
    let norm = 0;
    for (const [t, f] of tf) {
      const c = terms.get(t);
      if (c === undefined) continue;
      const w = (1 + Math.log(f)) * (idf[c] as number);
      cols.push(c);
      vals.push(w);
      norm += w * w;
    }
    norm = Math.sqrt(norm) || 1;
    return { cols, vals: vals.map((w) => w / norm) };
  });
  return { matrix: csrFromRows(rows, terms.size), terms, idf };
}

/** What a question is ranked against: the segments' and the terms' vectors, Float32 to halve the memory. */
export interface LsaModel {
  rank: number;
  terms: Map<string, number>;
  idf: Float64Array;
  /** terms x rank: rows of V. */
  termVectors: Float32Array;
  /** segments x rank: rows of U S at unit length. */
  segmentVectors: Float32Array;
}

/** The model at rank k (at most the SVD's) from a matrix and its SVD. */
export function lsaModelOf(m: TermSegmentMatrix, svd: TruncatedSvd, k = svd.rank): LsaModel {
  const n = m.matrix.rows;
  const segmentVectors = new Float32Array(n * k);
  const row = new Float64Array(k);
  for (let r = 0; r < n; r++) {
    let norm = 0;
    for (let j = 0; j < k; j++) {
      row[j] = (svd.u[r * svd.rank + j] as number) * (svd.sigma[j] as number);
      norm += (row[j] as number) ** 2;
    }
    norm = Math.sqrt(norm) || 1;
    for (let j = 0; j < k; j++) segmentVectors[r * k + j] = (row[j] as number) / norm;
  }
  const termVectors = new Float32Array(m.matrix.columns * k);
  for (let c = 0; c < m.matrix.columns; c++)
    for (let j = 0; j < k; j++) termVectors[c * k + j] = svd.v[c * svd.rank + j] as number;
  return { rank: k, terms: m.terms, idf: m.idf, termVectors, segmentVectors };
}

/**
 * The model of `segments`; the rank is at most `rank`, and below it when the corpus has fewer
 * segments or terms. Undefined when no term is in two segments (nothing latent to learn).
 */
export function buildLsaModel(
  segments: readonly LsaText[],
  rank: number = lsaDefaults.rank,
  options: Partial<SvdOptions> = {},
): LsaModel | undefined {
  const m = termSegmentMatrix(segments);
  const k = Math.min(rank, m.matrix.rows, m.matrix.columns);
  if (k < 1) return undefined;
  return lsaModelOf(m, truncatedSvd(m.matrix, k, options));
}

/**
 * A question's weighted terms: its own words through the English analyzer, each glossary
 * translation (a Norwegian question's English words) at its weight, each word-vector
 * expansion at `expansionWeight`; so a Norwegian question reaches an English corpus as its
 * keyword search does.
 */
export function questionTerms(
  query: string,
  translations: readonly { lexeme: string; weight: number }[],
  expansions: readonly { lexeme: string }[],
): Map<string, number> {
  const terms = new Map<string, number>();
  const add = (term: string, weight: number) => terms.set(term, (terms.get(term) ?? 0) + weight);
  for (const t of analyzeEnglish(query)) add(t, 1);
  for (const t of translations) add(stemmer(t.lexeme), t.weight);
  for (const t of expansions) add(stemmer(t.lexeme), lsaDefaults.expansionWeight);
  return terms;
}

/** The question's vector: sum of weight x idf x its terms' rows of V, at unit length (zero when no term is known). */
export function foldIn(model: LsaModel, terms: ReadonlyMap<string, number>): Float64Array {
  const k = model.rank;
  const q = new Float64Array(k);
  for (const [t, w] of terms) {
    const c = model.terms.get(t);
    if (c === undefined) continue;
    const x = w * (model.idf[c] as number);
    for (let j = 0; j < k; j++) q[j] = (q[j] as number) + x * (model.termVectors[c * k + j] as number);
  }
  return unit(q);
}

function unit(v: Float64Array): Float64Array {
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  for (let j = 0; j < v.length; j++) v[j] = (v[j] as number) / norm;
  return v;
}

/**
 * The `depth` segments (their indices, with the cosine) nearest the question, after adding
 * `feedbackWeight` x the mean of the feedback segments' vectors to the question's; ties go to
 * the lower index. `accept` keeps out segments a filter excludes.
 */
export function lsaRanking(
  model: LsaModel,
  question: Float64Array,
  feedback: readonly number[],
  options: { depth: number; feedbackWeight: number; accept?: (segment: number) => boolean },
): { segment: number; score: number }[] {
  const k = model.rank;
  const vectors = model.segmentVectors;
  const q = Float64Array.from(question);
  for (const d of feedback)
    for (let j = 0; j < k; j++)
      q[j] = (q[j] as number) + (options.feedbackWeight * (vectors[d * k + j] as number)) / feedback.length;
  unit(q);
  // The best `depth` so far, best first: an insertion into a short list beats sorting every segment.
  const best: number[] = [];
  const scores: number[] = [];
  const n = vectors.length / k;
  for (let i = 0; i < n; i++) {
    if (options.accept && !options.accept(i)) continue;
    let s = 0;
    const o = i * k;
    for (let j = 0; j < k; j++) s += (q[j] as number) * (vectors[o + j] as number);
    if (best.length === options.depth && s <= (scores[best.length - 1] as number)) continue;
    let at = best.length;
    while (at > 0 && (scores[at - 1] as number) < s) at--;
    best.splice(at, 0, i);
    scores.splice(at, 0, s);
    if (best.length > options.depth) {
      best.pop();
      scores.pop();
    }
  }
  return best.map((segment, i) => ({ segment, score: scores[i] as number }));
}
