import { describe, expect, it } from 'vitest';
import { createBatchCollector } from './batch-collector.js';

describe('createBatchCollector', () => {
  it('runs a full batch at once and answers each item', async () => {
    const batches: number[][] = [];
    const collect = createBatchCollector(3, 10_000, async (items: number[]) => {
      batches.push(items);
      return items.map((item) => item * 2);
    });
    expect(await Promise.all([1, 2, 3].map(collect))).toEqual([2, 4, 6]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('runs a partial batch once the oldest item has waited max_wait_ms', async () => {
    const batches: number[][] = [];
    const collect = createBatchCollector(10, 20, async (items: number[]) => {
      batches.push(items);
      return items;
    });
    expect(await Promise.all([collect(1), collect(2)])).toEqual([1, 2]);
    expect(batches).toEqual([[1, 2]]);
  });

  it('rejects every item of a failed batch', async () => {
    const collect = createBatchCollector(2, 10, async () => {
      throw new Error('boom');
    });
    const results = await Promise.allSettled([collect('a'), collect('b')]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
  });
});
