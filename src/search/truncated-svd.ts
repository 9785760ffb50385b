/**
 * Truncated SVD of a sparse matrix by randomized subspace iteration (Halko, Martinsson and
 * Tropp 2011, algorithm 4.4): Y = A G with a seeded Gaussian G of `rank + oversample`
 * columns, `powerIterations` rounds of Y = A (A^T Q), Q = orth(Y) after each, then the small
 * B = Q^T A decomposed through the eigenvectors of B B^T (cyclic Jacobi). For the corpus LSA
 * (lsa-model.ts): rows are segments, columns terms. Deterministic for a seed: every loop runs
 * in a fixed order, so the same matrix gives the same bits.
 *
 * Speed is the point (issue 34: the PostgreSQL manual's 8,500 segments took 97-187 s with
 * modified Gram-Schmidt on strided columns). Orthonormalisation is CholeskyQR2 (Gram matrix,
 * Cholesky, a triangular multiply, twice), whose loops all run along contiguous rows; only the
 * segment side is orthonormalised in the power iterations, since A^T Q of an orthonormal Q is
 * conditioned like A itself; and V comes from A^T U / sigma (nnz x rank) instead of a dense
 * product over the terms.
 */

/** Compressed sparse rows: row r's entries are cols/vals[rowStart[r] .. rowStart[r + 1]). */
export interface CsrMatrix {
  rows: number;
  columns: number;
  rowStart: Int32Array;
  cols: Int32Array;
  vals: Float64Array;
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

export interface SvdOptions {
  oversample: number;
  powerIterations: number;
  seed: number;
}

export const svdDefaults: SvdOptions = { oversample: 10, powerIterations: 2, seed: 34 };

/** A CSR matrix from per-row column indices and values (each row's columns distinct). */
export function csrFromRows(
  rows: readonly { cols: ArrayLike<number>; vals: ArrayLike<number> }[],
  columns: number,
): CsrMatrix {
  const rowStart = new Int32Array(rows.length + 1);
  rows.forEach((row, r) => {
    rowStart[r + 1] = (rowStart[r] as number) + row.cols.length;
  });
  const nnz = rowStart[rows.length] as number;
  const cols = new Int32Array(nnz);
  const vals = new Float64Array(nnz);
  rows.forEach((row, r) => {
    cols.set(row.cols, rowStart[r]);
    vals.set(row.vals, rowStart[r]);
  });
  return { rows: rows.length, columns, rowStart, cols, vals };
}

/** The transpose, as CSR (so A^T X runs as gathers along rows, like A X). */
export function transpose(a: CsrMatrix): CsrMatrix {
  const rowStart = new Int32Array(a.columns + 1);
  for (let p = 0; p < a.cols.length; p++) {
    const c = (a.cols[p] as number) + 1;
    rowStart[c] = (rowStart[c] as number) + 1;
  }
  for (let c = 0; c < a.columns; c++) rowStart[c + 1] = (rowStart[c + 1] as number) + (rowStart[c] as number);
  const next = rowStart.slice(0, a.columns);
  const cols = new Int32Array(a.cols.length);
  const vals = new Float64Array(a.cols.length);
  for (let r = 0; r < a.rows; r++)
    for (let p = a.rowStart[r] as number; p < (a.rowStart[r + 1] as number); p++) {
      const c = a.cols[p] as number;
      const at = next[c] as number;
      cols[at] = r;
      vals[at] = a.vals[p] as number;
      next[c] = at + 1;
    }
  return { rows: a.columns, columns: a.rows, rowStart, cols, vals };
}

/** A seeded standard normal generator (mulberry32 through Box-Muller). */
export function gaussian(seed: number): () => number {
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

/** A (a.rows x l, row-major) = sparse A times dense X (a.columns x l, row-major). */
export function sparseTimes(a: CsrMatrix, x: Float64Array, l: number): Float64Array {
  const out = new Float64Array(a.rows * l);
  for (let r = 0; r < a.rows; r++) {
    const o = r * l;
    for (let p = a.rowStart[r] as number; p < (a.rowStart[r + 1] as number); p++) {
      const v = a.vals[p] as number;
      const xo = (a.cols[p] as number) * l;
      for (let j = 0; j < l; j++) out[o + j] = (out[o + j] as number) + v * (x[xo + j] as number);
    }
  }
  return out;
}

/** The upper triangle of X^T X (l x l) for X of n x l, row-major; four rows a pass, so G is read a quarter as often. */
function gram(x: Float64Array, n: number, l: number): Float64Array {
  const g = new Float64Array(l * l);
  let r = 0;
  for (; r + 4 <= n; r += 4) {
    const o0 = r * l;
    const o1 = o0 + l;
    const o2 = o1 + l;
    const o3 = o2 + l;
    for (let i = 0; i < l; i++) {
      const a0 = x[o0 + i] as number;
      const a1 = x[o1 + i] as number;
      const a2 = x[o2 + i] as number;
      const a3 = x[o3 + i] as number;
      const gi = i * l;
      for (let j = i; j < l; j++)
        g[gi + j] =
          (g[gi + j] as number) +
          a0 * (x[o0 + j] as number) +
          a1 * (x[o1 + j] as number) +
          a2 * (x[o2 + j] as number) +
          a3 * (x[o3 + j] as number);
    }
  }
  for (; r < n; r++) {
    const o = r * l;
    for (let i = 0; i < l; i++) {
      const a = x[o + i] as number;
      if (a === 0) continue;
      const gi = i * l;
      for (let j = i; j < l; j++) g[gi + j] = (g[gi + j] as number) + a * (x[o + j] as number);
    }
  }
  return g;
}

/**
 * The inverse of the Cholesky factor R (G = R^T R, G's upper triangle given), upper triangular.
 * A column that is (numerically) a combination of earlier ones has no pivot: its row and
 * column of the inverse stay zero, so orthonormalising drops it (its column becomes zero),
 * which is what a rank-deficient Y (a small matrix, fewer rows than rank + oversample) needs.
 */
function choleskyInverse(g: Float64Array, l: number): Float64Array {
  const r = new Float64Array(l * l);
  const live = new Uint8Array(l);
  for (let j = 0; j < l; j++) {
    for (let i = 0; i <= j; i++) {
      let s = g[i * l + j] as number;
      for (let k = 0; k < i; k++) s -= (r[k * l + i] as number) * (r[k * l + j] as number);
      if (i < j) {
        r[i * l + j] = live[i] ? s / (r[i * l + i] as number) : 0;
      } else if (s > 1e-12 * (g[j * l + j] as number) && s > 0) {
        r[j * l + j] = Math.sqrt(s);
        live[j] = 1;
      }
    }
  }
  // Back substitution for R^{-1}, column by column of the identity.
  const inv = new Float64Array(l * l);
  for (let c = 0; c < l; c++) {
    if (!live[c]) continue;
    for (let i = c; i >= 0; i--) {
      if (!live[i]) continue;
      let s = i === c ? 1 : 0;
      for (let k = i + 1; k <= c; k++) s -= (r[i * l + k] as number) * (inv[k * l + c] as number);
      inv[i * l + c] = s / (r[i * l + i] as number);
    }
  }
  return inv;
}

/** X (n x l) times an upper triangular T (l x l), in place, row by row. */
function timesUpper(x: Float64Array, n: number, l: number, t: Float64Array): void {
  const row = new Float64Array(l);
  for (let r = 0; r < n; r++) {
    const o = r * l;
    row.fill(0);
    for (let i = 0; i < l; i++) {
      const a = x[o + i] as number;
      if (a === 0) continue;
      const ti = i * l;
      for (let j = i; j < l; j++) row[j] = (row[j] as number) + a * (t[ti + j] as number);
    }
    x.set(row, o);
  }
}

/**
 * Orthonormalises the l columns of X (n x l, row-major) in place: CholeskyQR, `passes` times.
 * One pass leaves an error of about eps x cond(X)^2, small for the power iterations' blocks
 * (only their span matters there); the second makes the final Q orthonormal to rounding.
 */
export function orthonormalise(x: Float64Array, n: number, l: number, passes = 2): void {
  for (let pass = 0; pass < passes; pass++) timesUpper(x, n, l, choleskyInverse(gram(x, n, l), l));
}

/** Eigen-decomposition of a symmetric l x l matrix (upper triangle read) by cyclic Jacobi: values and column eigenvectors. */
export function jacobiEigen(s: Float64Array, l: number): { values: Float64Array; vectors: Float64Array } {
  const a = new Float64Array(l * l);
  for (let i = 0; i < l; i++)
    for (let j = i; j < l; j++) {
      a[i * l + j] = s[i * l + j] as number;
      a[j * l + i] = s[i * l + j] as number;
    }
  // Rotations update rows of W^T (contiguous), transposed at the end.
  const wt = new Float64Array(l * l);
  for (let i = 0; i < l; i++) wt[i * l + i] = 1;
  let scale = 0;
  for (let i = 0; i < l; i++) scale += (a[i * l + i] as number) ** 2;
  for (let sweep = 0; sweep < 60; sweep++) {
    let off = 0;
    for (let p = 0; p < l; p++) for (let q = p + 1; q < l; q++) off += (a[p * l + q] as number) ** 2;
    if (off <= 1e-30 * scale || off === 0) break;
    for (let p = 0; p < l; p++)
      for (let q = p + 1; q < l; q++) {
        const apq = a[p * l + q] as number;
        if (apq === 0) continue;
        const theta = ((a[q * l + q] as number) - (a[p * l + p] as number)) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const sn = t * c;
        const app = a[p * l + p] as number;
        const aqq = a[q * l + q] as number;
        rotateRows(a, l, p, q, c, sn);
        // The same rotation on columns: a is symmetric, so rotate the rows' mirror.
        for (let k = 0; k < l; k++) {
          a[k * l + p] = a[p * l + k] as number;
          a[k * l + q] = a[q * l + k] as number;
        }
        a[p * l + p] = app - t * apq;
        a[q * l + q] = aqq + t * apq;
        a[p * l + q] = 0;
        a[q * l + p] = 0;
        rotateRows(wt, l, p, q, c, sn);
      }
  }
  const values = new Float64Array(l);
  const vectors = new Float64Array(l * l);
  for (let i = 0; i < l; i++) {
    values[i] = a[i * l + i] as number;
    for (let k = 0; k < l; k++) vectors[k * l + i] = wt[i * l + k] as number;
  }
  return { values, vectors };
}

/** Rows p and q of M (l wide) rotated: p <- c p - s q, q <- s p + c q. */
function rotateRows(m: Float64Array, l: number, p: number, q: number, c: number, s: number): void {
  const op = p * l;
  const oq = q * l;
  for (let k = 0; k < l; k++) {
    const x = m[op + k] as number;
    const y = m[oq + k] as number;
    m[op + k] = c * x - s * y;
    m[oq + k] = s * x + c * y;
  }
}

export function truncatedSvd(a: CsrMatrix, rank: number, options: Partial<SvdOptions> = {}): TruncatedSvd {
  const { oversample, powerIterations, seed } = { ...svdDefaults, ...options };
  const n = a.rows;
  const l = rank + oversample;
  const at = transpose(a);
  const random = gaussian(seed);
  const g = new Float64Array(a.columns * l);
  for (let i = 0; i < g.length; i++) g[i] = random();
  let y = sparseTimes(a, g, l);
  orthonormalise(y, n, l, powerIterations === 0 ? 2 : 1);
  for (let it = 0; it < powerIterations; it++) {
    y = sparseTimes(a, sparseTimes(at, y, l), l);
    orthonormalise(y, n, l, it === powerIterations - 1 ? 2 : 1);
  }
  // B^T = A^T Q (columns x l); B B^T = its Gram matrix (l x l).
  const bt = sparseTimes(at, y, l);
  const { values, vectors } = jacobiEigen(gram(bt, a.columns, l), l);
  const order = [...values.keys()]
    .sort((i, j) => (values[j] as number) - (values[i] as number) || i - j)
    .slice(0, rank);
  const sigma = Float64Array.from(order, (i) => Math.sqrt(Math.max(values[i] as number, 0)));
  // U = Q W (rows x rank), the eigenvectors in order.
  const w = new Float64Array(l * rank);
  for (let j = 0; j < l; j++)
    order.forEach((e, k) => {
      w[j * rank + k] = vectors[j * l + e] as number;
    });
  const u = new Float64Array(n * rank);
  for (let r = 0; r < n; r++) {
    const o = r * rank;
    for (let j = 0; j < l; j++) {
      const q = y[r * l + j] as number;
      if (q === 0) continue;
      for (let k = 0; k < rank; k++) u[o + k] = (u[o + k] as number) + q * (w[j * rank + k] as number);
    }
  }
  // V = A^T U / sigma: A^T u_k = sigma_k v_k, over the nonzeros instead of columns x l x rank.
  const v = sparseTimes(at, u, rank);
  for (let c = 0; c < a.columns; c++)
    for (let k = 0; k < rank; k++) {
      const s = sigma[k] as number;
      v[c * rank + k] = s > 0 ? (v[c * rank + k] as number) / s : 0;
    }
  return { rank, sigma, u, v };
}
