/**
 * Collects items into batches of `size`, or fewer once the oldest has waited `maxWaitMs`, and
 * hands each batch to `run`; every caller gets the answer for its own item (spec 2.1 rule 4:
 * a batch stage sees many messages at once and answers each of them).
 *
 * With `slots` (the stage's adapter calls), a batch is taken from the waiting items only when
 * a slot is free to run it: a batch that is due while every slot is busy keeps filling (up to
 * `size`) until one frees. Closed at its deadline instead, it would wait for the slot as it
 * was, and the items arriving meanwhile would make more small batches queued behind it: on
 * the server path the embedding stage's batches of 64 averaged 18, one knowledge-index
 * transaction each.
 */
export function createBatchCollector<Item, Result>(
  size: number,
  maxWaitMs: number,
  run: (items: Item[]) => Promise<Result[]>,
  slots?: { run<T>(task: () => Promise<T>): Promise<T> },
): (item: Item) => Promise<Result> {
  interface Waiting {
    item: Item;
    /** When it arrived (performance.now()): its batch is due `maxWaitMs` later. */
    at: number;
    resolve: (result: Result) => void;
    reject: (error: unknown) => void;
  }
  let pending: Waiting[] = [];
  let timer: NodeJS.Timeout | undefined;
  /** Batches asked for a slot and not yet given one: each takes up to `size` items when it is. */
  let awaitingSlot = 0;

  function runBatch(batch: Waiting[]): Promise<void> {
    if (batch.length === 0) return Promise.resolve();
    return run(batch.map((entry) => entry.item)).then(
      (results) => {
        batch.forEach((entry, index) => {
          entry.resolve(results[index] as Result);
        });
      },
      (error: unknown) => {
        for (const entry of batch) entry.reject(error);
      },
    );
  }

  function take(): Waiting[] {
    const batch = pending.length > size ? pending.slice(0, size) : pending;
    pending = pending.length > size ? pending.slice(size) : [];
    return batch;
  }

  /** A batch is due (full, or its oldest item has waited long enough). */
  function due(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (!slots) {
      void runBatch(take());
      return;
    }
    awaitingSlot++;
    void slots.run(async () => {
      awaitingSlot--;
      const batch = take();
      schedule();
      await runBatch(batch);
    });
  }

  /** After items arrived or were taken: asks for another slot or sets the deadline, as needed. */
  function schedule(): void {
    // The items beyond what the batches already waiting for a slot will take.
    const uncovered = pending.length - awaitingSlot * size;
    if (uncovered <= 0) return;
    if (uncovered >= size) {
      due();
      return;
    }
    // Fewer than a batch beyond them: while a batch waits for its slot these wait too (it
    // calls schedule() again for what it leaves when it gets one); otherwise the oldest's
    // deadline, which may have passed while it waited behind a full batch.
    if (awaitingSlot > 0 || timer) return;
    const oldest = pending[0] as Waiting;
    timer = setTimeout(due, Math.max(0, oldest.at + maxWaitMs - performance.now()));
  }

  return (item) =>
    new Promise<Result>((resolve, reject) => {
      pending.push({ item, at: performance.now(), resolve, reject });
      schedule();
    });
}
