import { describe, expect, it } from 'vitest';
import { createBatcher, createGroupWriter, type Linger } from './batcher.js';

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

describe('createBatcher with linger', () => {
  /** A batcher of up to 100 that lingers as `linger` says, and the batches it wrote. */
  function lingeringBatcher(linger: Linger) {
    const batches: number[][] = [];
    const call = createBatcher(
      async (inputs: number[]) => {
        batches.push(inputs);
        return inputs;
      },
      100,
      { linger },
    );
    return { batches, call };
  }

  it('holds a small batch while `when` says more come, so calls of the next moments join it', async () => {
    const { batches, call } = lingeringBatcher({ ms: 200, below: 3, when: () => true });
    const first = call(1);
    // Well inside the 200 ms linger, even on a loaded machine: the two join the first.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const rest = [call(2), call(3)];
    await Promise.all([first, ...rest]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('writes at once when `when` says nothing more comes, or once `below` are waiting', async () => {
    let streaming = false;
    const { batches, call } = lingeringBatcher({ ms: 60_000, below: 2, when: () => streaming });
    // Not streaming: written on the next turn, not a minute later.
    await call(1);
    streaming = true;
    // Streaming, but two already wait (below: 2): no lingering either.
    await Promise.all([call(2), call(3)]);
    expect(batches).toEqual([[1], [2, 3]]);
  });
});

describe('createGroupWriter', () => {
  it('writes what was added in one turn together, the rest in later batches, and reports idle', async () => {
    const batches: number[][] = [];
    const writer = createGroupWriter(async (inputs: number[]) => {
      batches.push(inputs);
      // Long beside the 2 ms below, so a timer run late on a loaded machine still lands in it.
      await new Promise((resolve) => setTimeout(resolve, 100));
    }, 3);
    for (const input of [1, 2, 3, 4]) writer.add(input);
    expect(writer.busy).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 2));
    writer.add(5);
    await writer.idle();
    expect(writer.busy).toBe(false);
    expect(batches).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
  });

  it('reports and counts a write that throws, and goes on', async () => {
    const written: number[] = [];
    const reported: Array<[string, number]> = [];
    const writer = createGroupWriter(
      async (inputs: number[]) => {
        if (inputs.includes(1)) throw new Error('refused');
        written.push(...inputs);
      },
      500,
      { onError: (error, inputs) => reported.push([(error as Error).message, inputs]) },
    );
    writer.add(1);
    writer.add(3);
    await writer.idle();
    writer.add(2);
    await writer.idle();
    expect(written).toEqual([2]);
    expect(reported).toEqual([['refused', 2]]);
    expect(writer.lost).toEqual({ batches: 1, inputs: 2 });
  });

  /** A group writer of batches up to 100 that lingers while `coming` is true; it records its batches. */
  function lingeringWriter(ms: number, below: number) {
    const state = { batches: [] as number[][], coming: true };
    const writer = createGroupWriter(
      async (inputs: number[]) => {
        state.batches.push(inputs);
      },
      100,
      { linger: { ms, below, when: () => state.coming } },
    );
    return { state, writer };
  }

  it('lingers for a fuller batch while more inputs are coming, and not otherwise', async () => {
    // 500 ms against the 10 ms gap below: a loaded machine may run that timer late.
    const { state, writer } = lingeringWriter(500, 3);
    const { batches } = state;
    writer.add(1);
    await new Promise((resolve) => setTimeout(resolve, 10));
    writer.add(2);
    await writer.idle();
    // One batch: the second input arrived while the first waited.
    expect(batches).toEqual([[1, 2]]);
    // Nothing coming: written on the next turns, not after the 500 ms.
    state.coming = false;
    writer.add(3);
    for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1, 2], [3]]);
  });

  it('stops lingering once the batch is full or nothing more is coming', async () => {
    const { state, writer } = lingeringWriter(10_000, 2);
    const { batches } = state;
    const started = Date.now();
    writer.add(1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    writer.add(2);
    await writer.idle();
    expect(batches).toEqual([[1, 2]]);
    writer.add(3);
    await new Promise((resolve) => setTimeout(resolve, 5));
    state.coming = false;
    await writer.idle();
    expect(batches).toEqual([[1, 2], [3]]);
    // Neither waited out the 10 s.
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
