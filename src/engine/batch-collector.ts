/**
 * Collects items into batches of `size`, or fewer once the oldest has waited `maxWaitMs`, and
 * hands each batch to `run`; every caller gets the answer for its own item (spec 2.1 rule 4:
 * a batch stage sees many messages at once and answers each of them).
 */
export function createBatchCollector<Item, Result>(
  size: number,
  maxWaitMs: number,
  run: (items: Item[]) => Promise<Result[]>,
): (item: Item) => Promise<Result> {
  let pending: Array<{ item: Item; resolve: (result: Result) => void; reject: (error: unknown) => void }> =
    [];
  let timer: NodeJS.Timeout | undefined;

  function flush(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const batch = pending;
    pending = [];
    if (batch.length === 0) return;
    run(batch.map((entry) => entry.item)).then(
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

  return (item) =>
    new Promise<Result>((resolve, reject) => {
      pending.push({ item, resolve, reject });
      if (pending.length >= size) flush();
      else timer ??= setTimeout(flush, maxWaitMs);
    });
}
