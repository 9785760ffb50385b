import { describe, expect, it } from 'vitest';
import { createBatchCollector } from './batch-collector.js';
import { createSlots } from './slots.js';

/** A promise and the function that resolves it. */
function released(): { promise: Promise<void>; release: () => void } {
  let release!: () => void;
  const promise = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { promise, release };
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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

  it('keeps filling a due batch while every slot is busy, and runs it full once one frees', async () => {
    const slots = createSlots(1);
    const firstCall = released();
    const batches: number[][] = [];
    const collect = createBatchCollector(
      4,
      5,
      async (items: number[]) => {
        batches.push(items);
        if (batches.length === 1) await firstCall.promise;
        return items;
      },
      slots,
    );
    const answers = [collect(1)];
    await wait(20); // [1] is due and takes the only slot, which its call keeps
    answers.push(collect(2));
    await wait(20); // [2] is due, but no slot is free
    answers.push(collect(3), collect(4), collect(5), collect(6), collect(7));
    await wait(20);
    // Without slots in the collector, [2] would have been closed at its deadline and [3, 4, 5, 6],
    // [7] queued behind it: three calls instead of two once the slot frees.
    firstCall.release();
    expect(await Promise.all(answers)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(batches).toEqual([[1], [2, 3, 4, 5], [6, 7]]);
  });

  it('runs at most as many batches at once as there are slots', async () => {
    const slots = createSlots(2);
    let running = 0;
    let most = 0;
    const batches: number[][] = [];
    const collect = createBatchCollector(
      3,
      1,
      async (items: number[]) => {
        batches.push(items);
        running++;
        most = Math.max(most, running);
        await wait(10);
        running--;
        return items.map((item) => -item);
      },
      slots,
    );
    const items = Array.from({ length: 20 }, (_, index) => index);
    expect(await Promise.all(items.map(collect))).toEqual(items.map((item) => -item));
    expect(most).toBe(2);
    expect(batches.flat()).toEqual(items); // every item once, in arrival order
    expect(batches.every((batch) => batch.length <= 3)).toBe(true);
  });

  it('runs a partial batch after max_wait_ms when a slot is free', async () => {
    const batches: number[][] = [];
    const collect = createBatchCollector(
      10,
      20,
      async (items: number[]) => {
        batches.push(items);
        return items;
      },
      createSlots(2),
    );
    const started = performance.now();
    expect(await Promise.all([collect(1), collect(2)])).toEqual([1, 2]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(15);
    expect(batches).toEqual([[1, 2]]);
  });
});
