/**
 * A full garbage collection when the service goes quiet after work (issue 35). V8 collects as
 * the heap fills, and a heap that grew under a burst of requests (the first searches: their
 * parsed queries, rankings and responses) stays grown while nothing allocates: Node runs no
 * collection when idle. Measured after 50 searches (docs/benchmarks.md, "Start-up, first
 * queries and idle memory"): V8's heap held 105 MB for 45 MB live; one collection took
 * 150-190 ms under load and the process's RSS fell by about 40 MB.
 *
 * When a window of `windowMs` kept the event loop busy under 5% of the time, and V8's heap has
 * grown by at least `minGrowthBytes` since the last collection (or the start), one collection
 * runs. A collection that leaves the heap 16 MB above its low-water mark is followed by more,
 * 1, 2, 4 and 8 quiet windows later, until one brings it back near that mark: a quiet event
 * loop may still await work (bench:startup once left 93 of 108 MB after the first, and 84 after
 * a follow-up at the next window). What is left after the last is the new mark. A service that
 * stays idle collects at most five times per burst of work; one that stays busy never (V8
 * does its own).
 * Each thread runs its own: the service's (serve.ts) and PGlite's (db/pglite-worker.ts), whose
 * heap held 88 MB after those searches (16 MB collected).
 */
import { performance } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export interface IdleCollectionOptions {
  /** The window over which quiet is judged; 0 = never collect. */
  windowMs: number;
  /** Growth of V8's heap (committed bytes) since the last collection that makes one worth it. */
  minGrowthBytes: number;
  onCollect?: (report: CollectionReport) => void;
  /** Tests give their own: the event loop's busy share of the last window, 0..1. */
  busyShare?: () => number;
  /** Tests give their own: V8's committed heap bytes. */
  heapBytes?: () => number;
  /** Tests give their own: a full collection. */
  collect?: () => void;
}

export interface CollectionReport {
  heapBytesBefore: number;
  heapBytesAfter: number;
  durationMs: number;
}

export interface IdleCollection {
  /** Collections done so far. */
  readonly collections: number;
  stop(): void;
}

/**
 * The heap growth the service collects after (16 MB): an idle service's own polling grows it
 * by less between V8's collections, so a quiet service collects once, not every window.
 */
export const idleCollectionGrowthBytes = 16 * 2 ** 20;

/** Follow-ups come 1, 2, 4 and 8 quiet windows apart, then the heap is taken as settled. */
const maxFollowUpSpacing = 8;

/** A window in which the event loop was busy less than this share of the time is quiet. */
const QUIET_SHARE = 0.05;

export function startIdleCollection(options: IdleCollectionOptions): IdleCollection {
  // This isolate's heap (a worker thread has its own), where process.memoryUsage() is unclear.
  const heapBytes = options.heapBytes ?? (() => getHeapStatistics().total_heap_size);
  const collect = options.collect ?? exposedGc();
  let collections = 0;
  let baseline = heapBytes();
  /** The heap's low-water mark: what the service holds when it has settled. */
  let floor = baseline;
  /**
   * The last collection left the heap well above the floor: collect again after this many more
   * quiet windows (1, then 2, 4, 8: at most four follow-ups per burst); 0 = none due.
   */
  let followUpIn = 0;
  let followUpSpacing = 1;
  let ticker: NodeJS.Timeout | undefined;
  if (options.windowMs > 0 && collect) {
    const busyShare = options.busyShare ?? eventLoopBusyShare();
    const run = (before: number) => {
      const started = performance.now();
      collect();
      collections++;
      baseline = heapBytes();
      options.onCollect?.({
        heapBytesBefore: before,
        heapBytesAfter: baseline,
        durationMs: performance.now() - started,
      });
    };
    ticker = setInterval(() => {
      if (busyShare() >= QUIET_SHARE) return;
      const before = heapBytes();
      if (followUpIn > 0) {
        if (--followUpIn > 0) return;
        // The event loop was quiet while work it awaits went on (the database reading for a
        // search index, say): what that work held was live then and may be garbage now.
        run(before);
        followUpSpacing *= 2;
        if (baseline - floor >= options.minGrowthBytes && followUpSpacing <= maxFollowUpSpacing)
          followUpIn = followUpSpacing;
        else floor = baseline; // what is left is what the service holds now
        return;
      }
      // Growth from the lowest heap seen since the last collection: V8 shrinks it now and then.
      if (before - baseline < options.minGrowthBytes) {
        baseline = Math.min(baseline, before);
        floor = Math.min(floor, before);
        return;
      }
      run(before);
      followUpSpacing = 1;
      followUpIn = baseline - floor >= options.minGrowthBytes ? 1 : 0;
    }, options.windowMs);
    // A service with nothing else to do may exit: the collection is no reason to stay.
    ticker.unref();
  }
  return {
    get collections() {
      return collections;
    },
    stop: () => clearInterval(ticker),
  };
}

/** The event loop's utilization since the last call (the first call: since the process began). */
function eventLoopBusyShare(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const share = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    return share;
  };
}

/**
 * V8's `gc`, which Node gives only under --expose-gc: the flag set now shows it in a new
 * context (the service's own global stays as it was). Undefined when this V8 refuses.
 */
function exposedGc(): (() => void) | undefined {
  const own = (globalThis as { gc?: unknown }).gc;
  if (typeof own === 'function') return own as () => void;
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    // Only this one context needed it: contexts made later (vm) stay as Node makes them.
    setFlagsFromString('--no-expose-gc');
    return typeof gc === 'function' ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  }
}
