import { describe, expect, it } from 'vitest';
import { createBatcher } from './batcher.js';

describe('createBatcher', () => {
  it('writes the calls of one turn together, and calls made during a write in the next batch', async () => {
    const batches: number[][] = [];
    const call = createBatcher(async (inputs: number[]) => {
      batches.push(inputs);
      await new Promise((resolve) => setTimeout(resolve, 20));
      return inputs.map((input) => input * 10);
    });
    const first = [call(1), call(2)];
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(batches).toEqual([[1, 2]]);
    const second = [call(3), call(4)];
    expect(await Promise.all([...first, ...second])).toEqual([10, 20, 30, 40]);
    expect(batches).toEqual([
      [1, 2],
      [3, 4],
    ]);
  });

  it('groups calls made by separate callbacks of the same event-loop turn', async () => {
    const batches: number[][] = [];
    const call = createBatcher(async (inputs: number[]) => {
      batches.push(inputs);
      return inputs;
    });
    // Three immediates queued together run in one check phase, like I/O callbacks of a poll.
    const calls = await new Promise<Promise<number>[]>((resolve) => {
      const made: Promise<number>[] = [];
      for (const value of [1, 2, 3])
        setImmediate(() => {
          made.push(call(value));
          if (made.length === 3) resolve(made);
        });
    });
    await Promise.all(calls);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('rejects every call of a failed batch and keeps working', async () => {
    let fail = true;
    const call = createBatcher(async (inputs: string[]) => {
      if (fail) throw new Error('database down');
      return inputs;
    });
    await expect(call('a')).rejects.toThrow('database down');
    fail = false;
    await expect(call('b')).resolves.toBe('b');
  });

  it('caps the batch size', async () => {
    const sizes: number[] = [];
    const call = createBatcher(async (inputs: number[]) => {
      sizes.push(inputs.length);
      await new Promise((resolve) => setImmediate(resolve));
      return inputs;
    }, 3);
    await Promise.all(Array.from({ length: 8 }, (_, index) => call(index)));
    expect(sizes).toEqual([3, 3, 2]);
  });
});
