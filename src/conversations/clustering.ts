/**
 * Topic clusters over conversation embeddings (conv_clustering): k-means++ on unit vectors
 * (cosine), with k chosen by the data — the k in a range with the best mean silhouette on a
 * sample — then run on every conversation. A conversation whose similarity to its cluster's
 * centre is under `minSimilarity` gets the noise label (-1) instead of a forced topic.
 * Seeded, so the same input gives the same clusters.
 */
import { seededRandom } from './random.js';

export interface ClusteringOptions {
  minK: number;
  maxK: number;
  /** Conversations the choice of k looks at (silhouette is quadratic in it). */
  sampleSize: number;
  /** Cosine similarity to the centre under which a conversation is noise; 0 keeps all. */
  minSimilarity: number;
  iterations: number;
  seed: number;
}

export const defaultClusteringOptions: ClusteringOptions = {
  minK: 2,
  maxK: 24,
  sampleSize: 1200,
  minSimilarity: 0,
  iterations: 25,
  seed: 42,
};

export interface ClusteringResult {
  k: number;
  /** Cluster index per vector; -1 for noise. */
  labels: number[];
  centroids: Float32Array[];
  /** Cosine similarity of each vector to its centre. */
  similarity: number[];
  /** Mean silhouette of the chosen k on the sample (-1..1; higher separates better). */
  silhouette: number;
}

export function clusterVectors(
  vectors: readonly Float32Array[],
  options: ClusteringOptions = defaultClusteringOptions,
): ClusteringResult {
  const n = vectors.length;
  if (n === 0) return { k: 0, labels: [], centroids: [], similarity: [], silhouette: 0 };
  const random = seededRandom(options.seed);
  const sample = sampleIndexes(n, options.sampleSize, random).map((index) => vectors[index] as Float32Array);
  const distances = pairwiseDistances(sample);
  let best = { k: 1, score: -Infinity };
  const maxK = Math.min(options.maxK, sample.length - 1);
  for (let k = Math.max(2, options.minK); k <= maxK; k++) {
    const { labels } = kMeans(sample, k, options.iterations, seededRandom(options.seed + k));
    const score = meanSilhouette(distances, labels, sample.length);
    if (score > best.score) best = { k, score };
  }
  const k = Math.min(best.k, n);
  const { labels, centroids } = kMeans(vectors, k, options.iterations, seededRandom(options.seed + k));
  const similarity = vectors.map((vector, index) =>
    dot(vector, centroids[labels[index] as number] as Float32Array),
  );
  const final = labels.map((label, index) =>
    (similarity[index] as number) < options.minSimilarity ? -1 : label,
  );
  return {
    k,
    labels: final,
    centroids,
    similarity,
    silhouette: Number.isFinite(best.score) ? best.score : 0,
  };
}

function sampleIndexes(n: number, size: number, random: () => number): number[] {
  const indexes = Array.from({ length: n }, (_, index) => index);
  if (n <= size) return indexes;
  for (let index = 0; index < size; index++) {
    const swap = index + Math.floor(random() * (n - index));
    [indexes[index], indexes[swap]] = [indexes[swap] as number, indexes[index] as number];
  }
  return indexes.slice(0, size).sort((a, b) => a - b);
}

/** k-means++ seeding, then Lloyd iterations with centres renormalised (spherical k-means). */
export function kMeans(
  vectors: readonly Float32Array[],
  k: number,
  iterations: number,
  random: () => number,
) {
  const dimensions = vectors[0]?.length ?? 0;
  const centroids: Float32Array[] = [
    Float32Array.from(vectors[Math.floor(random() * vectors.length)] as Float32Array),
  ];
  const nearest = vectors.map((vector) => 1 - dot(vector, centroids[0] as Float32Array));
  while (centroids.length < k) {
    const total = nearest.reduce((sum, value) => sum + Math.max(0, value) ** 2, 0);
    let target = random() * total;
    let chosen = vectors.length - 1;
    for (let index = 0; index < vectors.length; index++) {
      target -= Math.max(0, nearest[index] as number) ** 2;
      if (target <= 0) {
        chosen = index;
        break;
      }
    }
    const centre = Float32Array.from(vectors[chosen] as Float32Array);
    centroids.push(centre);
    vectors.forEach((vector, index) => {
      nearest[index] = Math.min(nearest[index] as number, 1 - dot(vector, centre));
    });
  }
  const labels = new Array<number>(vectors.length).fill(0);
  for (let round = 0; round < iterations; round++) {
    let moved = 0;
    vectors.forEach((vector, index) => {
      let bestLabel = 0;
      let bestScore = -Infinity;
      centroids.forEach((centre, label) => {
        const score = dot(vector, centre);
        if (score > bestScore) {
          bestScore = score;
          bestLabel = label;
        }
      });
      if (labels[index] !== bestLabel) moved++;
      labels[index] = bestLabel;
    });
    const sums = centroids.map(() => new Float32Array(dimensions));
    vectors.forEach((vector, index) => {
      const sum = sums[labels[index] as number] as Float32Array;
      for (let d = 0; d < dimensions; d++) sum[d] = (sum[d] as number) + (vector[d] as number);
    });
    sums.forEach((sum, label) => {
      if (unitLength(sum)) centroids[label] = sum; // an empty cluster keeps its old centre
    });
    if (moved === 0 && round > 0) break;
  }
  return { labels, centroids };
}

function unitLength(vector: Float32Array): boolean {
  let sum = 0;
  for (const value of vector) sum += value * value;
  if (sum === 0) return false;
  const scale = 1 / Math.sqrt(sum);
  for (let d = 0; d < vector.length; d++) vector[d] = (vector[d] as number) * scale;
  return true;
}

export function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let d = 0; d < a.length; d++) sum += (a[d] as number) * (b[d] as number);
  return sum;
}

/** Cosine distances between every pair of the sample, as one flat row-major matrix. */
function pairwiseDistances(vectors: readonly Float32Array[]): Float32Array {
  const n = vectors.length;
  const matrix = new Float32Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const distance = 1 - dot(vectors[i] as Float32Array, vectors[j] as Float32Array);
      matrix[i * n + j] = distance;
      matrix[j * n + i] = distance;
    }
  }
  return matrix;
}

function meanSilhouette(distances: Float32Array, labels: readonly number[], n: number): number {
  const k = Math.max(...labels) + 1;
  let total = 0;
  for (let i = 0; i < n; i++) {
    const sums = new Float64Array(k);
    const counts = new Float64Array(k);
    for (let j = 0; j < n; j++) {
      if (i === j) continue;
      const label = labels[j] as number;
      sums[label] = (sums[label] as number) + (distances[i * n + j] as number);
      counts[label] = (counts[label] as number) + 1;
    }
    const own = labels[i] as number;
    if ((counts[own] as number) === 0) continue; // a singleton scores 0
    const a = (sums[own] as number) / (counts[own] as number);
    let b = Infinity;
    for (let label = 0; label < k; label++) {
      if (label !== own && (counts[label] as number) > 0)
        b = Math.min(b, (sums[label] as number) / (counts[label] as number));
    }
    if (Number.isFinite(b)) total += (b - a) / Math.max(a, b);
  }
  return total / n;
}
