/**
 * A first-in first-out queue with O(1) take. `Array.prototype.shift` moves every remaining
 * element, and the dispatcher's queue of leased rows holds up to thousands of them: taking
 * from its front cost more than the rest of a delivery's bookkeeping.
 */
export interface Fifo<T> {
  readonly size: number;
  push(item: T): void;
  /** The oldest item, removed; undefined when empty. */
  take(): T | undefined;
  /** Every item, oldest first, leaving the queue empty. */
  drain(): T[];
}

export function createFifo<T>(): Fifo<T> {
  let items: T[] = [];
  let head = 0;
  return {
    get size() {
      return items.length - head;
    },
    push(item) {
      items.push(item);
    },
    take() {
      if (head === items.length) return undefined;
      const item = items[head] as T;
      items[head] = undefined as T; // no reference kept to what was taken
      head++;
      // Drop the taken prefix once it is half the array: amortised O(1), bounded memory.
      if (head === items.length) {
        items = [];
        head = 0;
      } else if (head > 1024 && head * 2 > items.length) {
        items = items.slice(head);
        head = 0;
      }
      return item;
    },
    drain() {
      const rest = items.slice(head);
      items = [];
      head = 0;
      return rest;
    },
  };
}
