/**
 * At most `count` tasks at once; the others wait their turn in arrival order. A stage's
 * adapter calls go through one of these, so `concurrency` bounds the calls however many
 * messages the stage holds (see heldMessages in stage-processor.ts).
 */
export interface Slots {
  run<T>(task: () => Promise<T>): Promise<T>;
  /** Tasks running now. */
  readonly busy: number;
}

export function createSlots(count: number): Slots {
  let busy = 0;
  const waiting: Array<() => void> = [];
  let head = 0;

  async function held<T>(task: () => Promise<T>): Promise<T> {
    try {
      return await task();
    } finally {
      give();
    }
  }

  function give(): void {
    if (head < waiting.length) {
      const next = waiting[head] as () => void;
      waiting[head++] = noop; // the slot passes straight to the next task: busy is unchanged
      if (head > 1024 && head * 2 > waiting.length) {
        waiting.splice(0, head);
        head = 0;
      }
      next();
      return;
    }
    busy--;
  }

  return {
    // A free slot is taken at once, without waiting a turn of the microtask queue for it.
    run(task) {
      if (busy < count) {
        busy++;
        return held(task);
      }
      return new Promise<void>((resolve) => waiting.push(resolve)).then(() => held(task));
    },
    get busy() {
      return busy;
    },
  };
}

function noop(): void {}
