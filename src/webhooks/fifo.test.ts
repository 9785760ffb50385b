import { describe, expect, it } from 'vitest';
import { createFifo } from './fifo.js';

describe('createFifo', () => {
  it('takes items in the order they were pushed, across compactions', () => {
    const queue = createFifo<number>();
    const taken: number[] = [];
    for (let index = 0; index < 5000; index++) {
      queue.push(index);
      // Take two for every three pushed, so the front is dropped while items remain.
      if (index % 3 !== 2) taken.push(queue.take() as number);
    }
    expect(queue.size).toBe(5000 - taken.length);
    const rest = queue.drain();
    expect([...taken, ...rest]).toEqual(Array.from({ length: 5000 }, (_, index) => index));
    expect(queue.size).toBe(0);
    expect(queue.take()).toBeUndefined();
  });

  it('answers undefined when empty and works again after being emptied', () => {
    const queue = createFifo<string>();
    expect(queue.take()).toBeUndefined();
    queue.push('a');
    expect(queue.take()).toBe('a');
    queue.push('b');
    queue.push('c');
    expect(queue.size).toBe(2);
    expect(queue.take()).toBe('b');
    expect(queue.drain()).toEqual(['c']);
  });
});
