import { describe, expect, it } from 'vitest';
import { createSlots } from './slots.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe('createSlots', () => {
  it('runs at most `count` tasks at once, the others in arrival order', async () => {
    const slots = createSlots(2);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        slots.run(async () => {
          order.push(index);
          running++;
          most = Math.max(most, running);
          await tick();
          running--;
        }),
      ),
    );
    expect(most).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(slots.busy).toBe(0);
  });

  it('frees the slot of a task that throws', async () => {
    const slots = createSlots(1);
    await expect(
      slots.run(async () => {
        throw new Error('adapter failed');
      }),
    ).rejects.toThrow('adapter failed');
    await expect(slots.run(async () => 'next')).resolves.toBe('next');
    expect(slots.busy).toBe(0);
  });
});
