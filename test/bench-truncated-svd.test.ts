import { describe, expect, it } from 'vitest';
import { type SparseRows, truncatedSvd } from '../bench/lib/truncated-svd.js';

/** A dense matrix as the sparse rows truncatedSvd reads (zeros left out). */
function sparse(dense: number[][]): SparseRows {
  return {
    columns: dense[0]?.length ?? 0,
    rows: dense.map((row) => {
      const cols = row.flatMap((v, c) => (v === 0 ? [] : [c]));
      return { cols: Int32Array.from(cols), vals: Float32Array.from(cols, (c) => row[c] as number) };
    }),
  };
}

describe('truncatedSvd (bench:corpus-lsa)', () => {
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

  it('reconstructs a rank-3 matrix from U, sigma and V', () => {
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
    // Float32 values in the sparse rows bound the precision.
    expect(error).toBeLessThan(1e-5);
  });
});
