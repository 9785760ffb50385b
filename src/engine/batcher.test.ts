import { describe, expect, it } from 'vitest';
import { createBatcher } from './batcher.js';

describe('createBatcher', () => {
  it('writes a lone call at once and groups calls made while a write is running', async () => {
    const batches: number[][] = [];
    const call = createBatcher(async (inputs: number[]) => {
      batches.push(inputs);
      await new Promise((resolve) => setTimeout(resolve, 20));
      return inputs.map((input) => input * 10);
    });
    const results = await Promise.all([1, 2, 3, 4].map(call));
    expect(results).toEqual([10, 20, 30, 40]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
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
    expect(sizes).toEqual([1, 3, 3, 1]);
  });
});
