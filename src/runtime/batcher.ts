/**
 * Group commit: calls made while a batch is being written wait and go together in the next
 * one, so N concurrent handlers cost one database round trip instead of N. The first call
 * after an idle spell is written on the next turn of the event loop (setImmediate, not a
 * timer), so the calls made by every I/O callback of the same turn join it: with PGlite a
 * write runs synchronously, and a drain started at once would finish before the next
 * callback could add to it, leaving one statement per call.
 */
export function createBatcher<Input, Output>(
  write: (inputs: Input[]) => Promise<Output[]>,
  maxBatch = 500,
  options: { linger?: Linger } = {},
): (input: Input) => Promise<Output> {
  let waiting: Array<{ input: Input; resolve: (output: Output) => void; reject: (error: unknown) => void }> =
    [];
  let writing = false;
  const { linger } = options;

  async function drain(): Promise<void> {
    writing = true;
    while (waiting.length > 0) {
      if (linger) await lingerForMore(linger, () => waiting.length);
      const batch = waiting.slice(0, maxBatch);
      waiting = waiting.slice(batch.length);
      try {
        const outputs = await write(batch.map((entry) => entry.input));
        batch.forEach((entry, index) => {
          entry.resolve(outputs[index] as Output);
        });
      } catch (error) {
        for (const entry of batch) entry.reject(error);
      }
    }
    writing = false;
  }

  return (input) =>
    new Promise<Output>((resolve, reject) => {
      waiting.push({ input, resolve, reject });
      if (!writing) {
        writing = true;
        setImmediate(() => void drain());
      }
    });
}

export interface GroupWriter<Input> {
  /** Queues `input` for the next batch; nothing to await per call. */
  add(input: Input): void;
  /** True while inputs wait or a batch is being written. */
  readonly busy: boolean;
  /** Resolves once everything added so far (and meanwhile) is written. */
  idle(): Promise<void>;
  /** Batches whose `write` threw, and the inputs they held: lost, and reported to `onError`. */
  readonly lost: { batches: number; inputs: number };
}

/** How often a lingering batch looks whether it is full, or whether more are still coming. */
const LINGER_STEP_MS = 10;

/** Wait `ms` for a fuller batch while fewer than `below` wait and `when` says more come. */
export interface Linger {
  ms: number;
  below: number;
  when?: () => boolean;
}

/**
 * A statement has a fixed cost (parse, plan, start, commit) of many rows' worth: a batch of
 * fewer than `below` waits up to `ms` for more to join it while `when` says more are coming
 * soon. It looks again every LINGER_STEP_MS, and stops waiting once the batch is full or
 * nothing more is coming (waiting for nothing only adds latency).
 */
async function lingerForMore(linger: Linger, waiting: () => number): Promise<void> {
  for (
    let waited = 0;
    waited < linger.ms && waiting() < linger.below && (linger.when?.() ?? true);
    waited += LINGER_STEP_MS
  )
    await new Promise((resolve) => setTimeout(resolve, Math.min(LINGER_STEP_MS, linger.ms - waited)));
}

export interface GroupWriterOptions {
  linger?: Linger;
  /**
   * Told of a batch whose `write` threw (and so was lost), with how many inputs it held. Without
   * it the failure is written to stderr: a lost batch is never silent.
   */
  onError?: (error: unknown, inputs: number) => void;
}

/**
 * Group commit for writes nobody waits on one by one (webhook deliveries and their results):
 * the same batching as createBatcher, without a promise per call, and optionally lingering
 * for a fuller batch. `write` reports its own failures; one that throws anyway loses only its
 * batch, which is counted in `lost` and reported to `onError`.
 */
export function createGroupWriter<Input>(
  write: (inputs: Input[]) => Promise<void>,
  maxBatch = 500,
  options: GroupWriterOptions = {},
): GroupWriter<Input> {
  const { linger } = options;
  let waiting: Input[] = [];
  let draining: Promise<void> | undefined;
  const lost = { batches: 0, inputs: 0 };

  async function drain(): Promise<void> {
    while (waiting.length > 0) {
      if (linger) await lingerForMore(linger, () => waiting.length);
      const all = waiting;
      waiting = all.length > maxBatch ? all.slice(maxBatch) : [];
      const batch = all.length > maxBatch ? all.slice(0, maxBatch) : all;
      await write(batch).catch((error: unknown) => reportLost(error, batch.length));
    }
    draining = undefined;
  }

  function reportLost(error: unknown, inputs: number): void {
    lost.batches++;
    lost.inputs += inputs;
    if (options.onError) options.onError(error, inputs);
    else console.error(`a group write of ${inputs} inputs failed and was dropped:`, error);
  }

  return {
    add(input) {
      waiting.push(input);
      // Written on the next turn, so the calls of every callback of this turn join it.
      draining ??= new Promise<void>((resolve) => setImmediate(resolve)).then(drain);
    },
    get busy() {
      return draining !== undefined;
    },
    async idle() {
      while (draining) await draining;
    },
    lost,
  };
}
