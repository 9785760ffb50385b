/**
 * Truncated SVD of a sparse rows x columns matrix by the randomized range finder (Halko,
 * Martinsson and Tropp 2011): Y = A G with a seeded Gaussian G, a few power iterations
 * (A A^T) Y, Q = orth(Y), B = Q^T A, then the eigenvectors of the small B B^T by cyclic
 * Jacobi. For LSA over a corpus's segments (bench/corpus-lsa.ts): rows are segments, columns
 * terms. Deterministic for a seed.
 */

export interface SparseRows {
  /** Per row, its column indices and values. */
  rows: { cols: Int32Array; vals: Float32Array }[];
  columns: number;
}

export interface TruncatedSvd {
  rank: number;
  /** Singular values, largest first. */
  sigma: Float64Array;
  /** rows x rank, row-major: the left singular vectors. */
  u: Float64Array;
  /** columns x rank, row-major: the right singular vectors. */
  v: Float64Array;
}

function gaussian(seed: number): () => number {
  let s = seed >>> 0;
  const uniform = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) + 0.5) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
}

/** A (rows x l) = A_sparse (rows x columns) times X (columns x l). */
function times(a: SparseRows, x: Float64Array, l: number): Float64Array {
  const out = new Float64Array(a.rows.length * l);
  a.rows.forEach((row, r) => {
    for (let i = 0; i < row.cols.length; i++) {
      const c = row.cols[i] as number;
      const v = row.vals[i] as number;
      for (let j = 0; j < l; j++) out[r * l + j] = (out[r * l + j] as number) + v * (x[c * l + j] as number);
    }
  });
  return out;
}

/** A^T (columns x l) times Y (rows x l). */
function transposeTimes(a: SparseRows, y: Float64Array, l: number): Float64Array {
  const out = new Float64Array(a.columns * l);
  a.rows.forEach((row, r) => {
    for (let i = 0; i < row.cols.length; i++) {
      const c = row.cols[i] as number;
      const v = row.vals[i] as number;
      for (let j = 0; j < l; j++) out[c * l + j] = (out[c * l + j] as number) + v * (y[r * l + j] as number);
    }
  });
  return out;
}

/** Orthonormalises the l columns of an n x l row-major matrix in place (modified Gram-Schmidt, twice). */
function orthonormalise(m: Float64Array, n: number, l: number): void {
  for (let pass = 0; pass < 2; pass++)
    for (let j = 0; j < l; j++) {
      for (let p = 0; p < j; p++) {
        let dot = 0;
        for (let i = 0; i < n; i++) dot += (m[i * l + j] as number) * (m[i * l + p] as number);
        for (let i = 0; i < n; i++) m[i * l + j] = (m[i * l + j] as number) - dot * (m[i * l + p] as number);
      }
      let norm = 0;
      for (let i = 0; i < n; i++) norm += (m[i * l + j] as number) ** 2;
      norm = Math.sqrt(norm) || 1;
      for (let i = 0; i < n; i++) m[i * l + j] = (m[i * l + j] as number) / norm;
    }
}

/** Eigen-decomposition of a symmetric l x l matrix by cyclic Jacobi: values and column eigenvectors. */
function jacobiEigen(s: Float64Array, l: number): { values: Float64Array; vectors: Float64Array } {
  const a = Float64Array.from(s);
  const w = new Float64Array(l * l);
  for (let i = 0; i < l; i++) w[i * l + i] = 1;
  for (let sweep = 0; sweep < 50; sweep++) {
    let off = 0;
    for (let p = 0; p < l; p++) for (let q = p + 1; q < l; q++) off += (a[p * l + q] as number) ** 2;
    if (off < 1e-22) break;
    for (let p = 0; p < l; p++)
      for (let q = p + 1; q < l; q++) {
        const apq = a[p * l + q] as number;
        if (Math.abs(apq) < 1e-300) continue;
        const theta = ((a[q * l + q] as number) - (a[p * l + p] as number)) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const sn = t * c;
        for (let k = 0; k < l; k++) {
          const akp = a[k * l + p] as number;
          const akq = a[k * l + q] as number;
          a[k * l + p] = c * akp - sn * akq;
          a[k * l + q] = sn * akp + c * akq;
        }
        for (let k = 0; k < l; k++) {
          const apk = a[p * l + k] as number;
          const aqk = a[q * l + k] as number;
          a[p * l + k] = c * apk - sn * aqk;
          a[q * l + k] = sn * apk + c * aqk;
        }
        for (let k = 0; k < l; k++) {
          const wkp = w[k * l + p] as number;
          const wkq = w[k * l + q] as number;
          w[k * l + p] = c * wkp - sn * wkq;
          w[k * l + q] = sn * wkp + c * wkq;
        }
      }
  }
  const values = new Float64Array(l);
  for (let i = 0; i < l; i++) values[i] = a[i * l + i] as number;
  return { values, vectors: w };
}

export function truncatedSvd(
  a: SparseRows,
  rank: number,
  options = { oversample: 10, powerIterations: 2, seed: 34 },
) {
  const n = a.rows.length;
  const l = rank + options.oversample;
  const random = gaussian(options.seed);
  const g = new Float64Array(a.columns * l).map(() => random());
  let y = times(a, g, l);
  orthonormalise(y, n, l);
  for (let it = 0; it < options.powerIterations; it++) {
    const z = transposeTimes(a, y, l);
    orthonormalise(z, a.columns, l);
    y = times(a, z, l);
    orthonormalise(y, n, l);
  }
  // B^T = A^T Q (columns x l); B B^T = Q^T A A^T Q (l x l).
  const bt = transposeTimes(a, y, l);
  const bbt = new Float64Array(l * l);
  for (let c = 0; c < a.columns; c++)
    for (let i = 0; i < l; i++) {
      const x = bt[c * l + i] as number;
      if (x === 0) continue;
      for (let j = 0; j < l; j++) bbt[i * l + j] = (bbt[i * l + j] as number) + x * (bt[c * l + j] as number);
    }
  const { values, vectors } = jacobiEigen(bbt, l);
  const order = [...values.keys()]
    .sort((i, j) => (values[j] as number) - (values[i] as number))
    .slice(0, rank);
  const sigma = Float64Array.from(order, (i) => Math.sqrt(Math.max(values[i] as number, 0)));
  const u = new Float64Array(n * rank);
  for (let r = 0; r < n; r++)
    order.forEach((e, k) => {
      let s = 0;
      for (let j = 0; j < l; j++) s += (y[r * l + j] as number) * (vectors[j * l + e] as number);
      u[r * rank + k] = s;
    });
  const v = new Float64Array(a.columns * rank);
  for (let c = 0; c < a.columns; c++)
    order.forEach((e, k) => {
      let s = 0;
      for (let j = 0; j < l; j++) s += (bt[c * l + j] as number) * (vectors[j * l + e] as number);
      v[c * rank + k] = (sigma[k] as number) > 0 ? s / (sigma[k] as number) : 0;
    });
  return { rank, sigma, u, v } satisfies TruncatedSvd;
}
