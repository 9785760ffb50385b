import { describe, expect, it } from 'vitest';
import {
  type CsrMatrix,
  csrFromRows,
  gaussian,
  orthonormalise,
  transpose,
  truncatedSvd,
} from './truncated-svd.js';

/** A dense matrix as CSR (zeros left out). */
function sparse(dense: number[][]): CsrMatrix {
  return csrFromRows(
    dense.map((row) => {
      const cols = row.flatMap((v, c) => (v === 0 ? [] : [c]));
      return { cols, vals: cols.map((c) => row[c] as number) };
    }),
    dense[0]?.length ?? 0,
  );
}

/** k orthonormal columns of length n (row-major n x k), from a seeded Gaussian, orthonormalised by plain Gram-Schmidt here. */
function orthonormalColumns(n: number, k: number, seed: number): number[][] {
  const random = gaussian(seed);
  const columns: number[][] = [];
  for (let j = 0; j < k; j++) {
    const c = Array.from({ length: n }, random);
    for (const prior of columns) {
      const dot = c.reduce((s, x, i) => s + x * (prior[i] as number), 0);
      for (let i = 0; i < n; i++) c[i] = (c[i] as number) - dot * (prior[i] as number);
    }
    const norm = Math.hypot(...c);
    columns.push(c.map((x) => x / norm));
  }
  return columns;
}

describe('truncatedSvd', () => {
  it('finds the singular values of a matrix with known ones, largest first', () => {
    // Rows and columns permuted from diag(5, 3, 2, 0.5): the singular values are those.
    const dense = [
      [0, 0, 3, 0],
      [5, 0, 0, 0],
      [0, 0, 0, 0.5],
      [0, 2, 0, 0],
      [0, 0, 0, 0],
    ];
    const svd = truncatedSvd(sparse(dense), 3, { oversample: 1, powerIterations: 2, seed: 1 });
    expect([...svd.sigma].map((s) => Number(s.toFixed(6)))).toEqual([5, 3, 2]);
  });

  it('gives A v = sigma u and the singular triplets of a dense reference U diag(s) V^T', () => {
    // 60 x 40 with 12 known singular values, the first 6 asked for: a gap after the sixth, as in a corpus.
    const s = [9, 7, 5.5, 4, 3, 2.5, 0.9, 0.7, 0.5, 0.3, 0.2, 0.1];
    const left = orthonormalColumns(60, s.length, 11);
    const right = orthonormalColumns(40, s.length, 12);
    const dense = Array.from({ length: 60 }, (_, r) =>
      Array.from({ length: 40 }, (_, c) =>
        s.reduce((sum, x, k) => sum + x * (left[k]?.[r] as number) * (right[k]?.[c] as number), 0),
      ),
    );
    const rank = 6;
    const svd = truncatedSvd(sparse(dense), rank, { oversample: 6, powerIterations: 2, seed: 3 });
    for (let k = 0; k < rank; k++) {
      expect(svd.sigma[k]).toBeCloseTo(s[k] as number, 6);
      // A v_k = sigma_k u_k, every row.
      for (let r = 0; r < 60; r++) {
        const av = (dense[r] as number[]).reduce((sum, x, c) => sum + x * (svd.v[c * rank + k] as number), 0);
        expect(Math.abs(av - (svd.sigma[k] as number) * (svd.u[r * rank + k] as number))).toBeLessThan(1e-6);
      }
      // The same vectors as the reference's, up to sign.
      const uDot = (left[k] as number[]).reduce((sum, x, r) => sum + x * (svd.u[r * rank + k] as number), 0);
      const vDot = (right[k] as number[]).reduce((sum, x, c) => sum + x * (svd.v[c * rank + k] as number), 0);
      expect(Math.abs(uDot)).toBeCloseTo(1, 6);
      expect(Math.abs(vDot)).toBeCloseTo(1, 6);
    }
  });

  it('reconstructs a rank-3 matrix with more sketch columns than the matrix has (rank deficient)', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647 - 0.5;
    };
    const left = Array.from({ length: 30 }, () => [random(), random(), random()]);
    const right = Array.from({ length: 3 }, () => Array.from({ length: 12 }, random));
    const dense = left.map((l) =>
      Array.from({ length: 12 }, (_, c) => l.reduce((s, x, k) => s + x * (right[k]?.[c] as number), 0)),
    );
    const rank = 3;
    // rank + oversample = 13 > 12 columns: the sketch is rank deficient and must be deflated.
    const svd = truncatedSvd(sparse(dense), rank);
    let error = 0;
    for (const [r, row] of dense.entries())
      for (const [c, value] of row.entries()) {
        let rebuilt = 0;
        for (let k = 0; k < rank; k++)
          rebuilt +=
            (svd.u[r * rank + k] as number) * (svd.sigma[k] as number) * (svd.v[c * rank + k] as number);
        error = Math.max(error, Math.abs(rebuilt - value));
      }
    expect(error).toBeLessThan(1e-9);
  });

  it('gives the same bits for the same matrix and seed, and other vectors for another seed', () => {
    const random = gaussian(5);
    const dense = Array.from({ length: 40 }, () =>
      Array.from({ length: 30 }, () => (random() > 0.8 ? Math.abs(random()) : 0)),
    );
    const a = truncatedSvd(sparse(dense), 5, { seed: 1 });
    const b = truncatedSvd(sparse(dense), 5, { seed: 1 });
    const c = truncatedSvd(sparse(dense), 5, { seed: 2, powerIterations: 0 });
    expect(Buffer.from(a.u.buffer).equals(Buffer.from(b.u.buffer))).toBe(true);
    expect(Buffer.from(a.v.buffer).equals(Buffer.from(b.v.buffer))).toBe(true);
    expect(Buffer.from(a.u.buffer).equals(Buffer.from(c.u.buffer))).toBe(false);
  });
});

describe('the SVD building blocks', () => {
  it('transposes a CSR matrix', () => {
    const dense = [
      [1, 0, 2],
      [0, 0, 3],
      [4, 5, 0],
    ];
    const t = transpose(sparse(dense));
    const back: number[][] = Array.from({ length: 3 }, () => [0, 0, 0]);
    for (let r = 0; r < t.rows; r++)
      for (let p = t.rowStart[r] as number; p < (t.rowStart[r + 1] as number); p++)
        (back[t.cols[p] as number] as number[])[r] = t.vals[p] as number;
    expect(back).toEqual(dense);
  });

  it('orthonormalises columns, dropping one that depends on the others', () => {
    // Columns 0 and 1 independent, column 2 = column 0 + column 1.
    const x = Float64Array.from([1, 2, 3, 0, 1, 1, 2, 0, 2, 1, 1, 2]);
    orthonormalise(x, 4, 3);
    const column = (j: number) => [0, 1, 2, 3].map((i) => x[i * 3 + j] as number);
    const dot = (a: number[], b: number[]) => a.reduce((s, v, i) => s + v * (b[i] as number), 0);
    expect(dot(column(0), column(0))).toBeCloseTo(1, 12);
    expect(dot(column(1), column(1))).toBeCloseTo(1, 12);
    expect(dot(column(0), column(1))).toBeCloseTo(0, 12);
    expect(Math.hypot(...column(2))).toBeLessThan(1e-6);
  });
});
