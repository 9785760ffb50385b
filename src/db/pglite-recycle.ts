/**
 * PGlite's thread, recycled when the service goes quiet (issue 35). PGlite's WebAssembly memory
 * grows with the work it does (a bulk ingest, the keyword index's fill reading every segment)
 * and never shrinks, and a thread that created the database keeps initdb's memory too: a
 * service that indexed a large corpus once kept that memory for as long as it ran. When a
 * window of `idleMs` was quiet (an idle service still polls a few times a second: quiet is
 * statements keeping the session busy under 5% of the window) and the process's RSS has grown
 * by at least `minGrowthBytes` since the thread last opened, the thread is recycled:
 * CHECKPOINT, PGlite closed (a clean shutdown), the thread terminated (its memory goes back
 * to the OS) and a new one opened on the same data dir, with the session settings replayed.
 *
 * No statement is lost or fails for it: a recycle starts only when none is on its way and the
 * session is outside a transaction, and statements that arrive while it runs are held, in
 * arrival order, and sent to the new thread once it is open. Committed data is on disk (the
 * checkpoint, and PGlite's WAL before it). If the new thread fails to open, the held
 * statements fail with that error and the next statement tries to open one again.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { type PgliteThreadSession, type StatementTime, startPgliteThread } from './pglite-thread.js';

export interface PgliteRecycleOptions {
  /**
   * The window over which quiet is judged (statements kept the session busy under 5% of it);
   * 0 = never recycle.
   */
  idleMs: number;
  /**
   * Growth of the process's RSS since the thread opened (from the lowest RSS of a quiet window
   * since then) that makes a recycle worth its cost.
   */
  minGrowthBytes: number;
  /** Run on every thread before any other statement (session settings, lost with the session). */
  sessionSetup?: readonly string[];
  onRecycle?: (report: RecycleReport) => void;
  onError?: (error: unknown) => void;
  /** The process's RSS in bytes (tests give their own). */
  rss?: () => number;
  /**
   * The first thread created the database (initdb), whose memory it keeps on top of its own
   * (about 170 MB measured): its first quiet window recycles whatever the growth.
   */
  createdDatabase?: boolean;
}

export interface RecycleReport {
  /** PGlite's WebAssembly memory before the recycle, in bytes. */
  wasmBytesBefore: number;
  rssBefore: number;
  rssAfter: number;
  durationMs: number;
  /** Statements that arrived during the recycle and were held for the new thread. */
  held: number;
}

export interface RecyclingPgliteSession extends PgliteThreadSession {
  /** Recycles as soon as no statement is on its way and no transaction is open. */
  recycle(): Promise<RecycleReport>;
  /** Recycles done so far. */
  readonly recycles: number;
  /** Also tells `listener` of each idle recycle, and `onError` of each that failed. */
  observe(listener: (report: RecycleReport) => void, onError: (error: unknown) => void): void;
}

type ThreadOptions = Parameters<typeof startPgliteThread>[1];

/** A window in which statements kept PGlite busy less than this share of the time is quiet. */
const QUIET_SHARE = 0.05;

export function startRecyclingPgliteThread(
  dataDir: string,
  threadOptions: ThreadOptions,
  options: PgliteRecycleOptions,
): Promise<RecyclingPgliteSession> {
  return recycling(() => startPgliteThread(dataDir, threadOptions), {
    createdDatabase: !existsSync(path.join(dataDir, 'PG_VERSION')),
    ...options,
    timeStatements: threadOptions?.timeStatements === true,
  });
}

/** The recycling over any way of starting a thread (`startThread`; tests give one that fails). */
export async function recycling(
  startThread: () => Promise<PgliteThreadSession>,
  options: PgliteRecycleOptions & { timeStatements?: boolean },
): Promise<RecyclingPgliteSession> {
  const rss = options.rss ?? (() => process.memoryUsage.rss());
  const observers: [(report: RecycleReport) => void, (error: unknown) => void][] = [
    [options.onRecycle ?? (() => {}), options.onError ?? (() => {})],
  ];
  const open = async (): Promise<PgliteThreadSession> => {
    const session = await startThread();
    try {
      for (const statement of options.sessionSetup ?? []) await session.query(statement);
    } catch (error) {
      await session.close().catch(() => undefined);
      throw error;
    }
    return session;
  };

  let thread: PgliteThreadSession | undefined = await open();
  let baseline = options.createdDatabase ? Number.NEGATIVE_INFINITY : rss();
  /** Set while a recycle (or a reopen after a failed one) runs: statements wait for it. */
  let swapping: Promise<void> | undefined;
  let held = 0;
  let inFlight = 0;
  let recycles = 0;
  let closing = false;
  let closedForGood = false;
  /** A quiet window found the process grown: recycle at the next moment the session is free. */
  let wanted = false;
  /** Time with a statement on its way in the current window, and since when one has been. */
  let busyMs = 0;
  let busySince = 0;
  /** Resolved when no statement is on its way (for a recycle asked for while busy). */
  let idleWaiters: (() => void)[] = [];
  /** Statement times of the threads recycled so far, so a benchmark's totals survive. */
  const earlierTimes = new Map<string, { count: number; milliseconds: number }>();

  // An idle service still polls (outbox, schedules, sweeps: a few statements a second), so
  // "idle" is a window in which statements kept the session busy under QUIET_SHARE of the time.
  const ticker = options.idleMs > 0 ? setInterval(onWindow, options.idleMs) : undefined;
  // An idle service with nothing else to do may exit: the recycle is no reason to stay.
  ticker?.unref();

  function onWindow(): void {
    const now = performance.now();
    const busy = busyMs + (inFlight > 0 ? now - busySince : 0);
    busyMs = 0;
    if (inFlight > 0) busySince = now;
    if (closing || swapping || busy >= QUIET_SHARE * options.idleMs) return;
    const resident = rss();
    // Growth counts from the lowest RSS of a quiet window since the thread opened: right after
    // a reopen the allocator may not have given the old thread's memory back yet.
    if (resident - baseline < options.minGrowthBytes) {
      baseline = Math.min(baseline, resident);
      return;
    }
    wanted = true;
    if (isFree()) recycleWanted();
  }

  function isFree(): boolean {
    return inFlight === 0 && swapping === undefined && thread !== undefined && !thread.inTransaction;
  }

  function recycleWanted(): void {
    wanted = false;
    void swap().then(
      (report) => {
        for (const [listener] of observers) listener(report);
      },
      (error) => {
        for (const [, onError] of observers) onError(error);
      },
    );
  }

  /** Sends work to the current thread, or holds it, in arrival order, until the swap ends. */
  function dispatch<T>(work: (session: PgliteThreadSession) => Promise<T>): Promise<T> {
    if (inFlight++ === 0) busySince = performance.now();
    let sent: Promise<T>;
    if (swapping) {
      held++;
      sent = swapping.then(() => work(current()));
    } else if (thread === undefined) {
      // The last reopen failed: this statement tries again.
      swapping = reopen().finally(() => {
        swapping = undefined;
      });
      sent = swapping.then(() => work(current()));
    } else sent = work(thread);
    return sent.finally(() => {
      if (--inFlight > 0) return;
      busyMs += performance.now() - busySince;
      for (const waiter of idleWaiters.splice(0)) waiter();
      // The commit that ends a transaction lands here too: a wanted recycle waits for no more.
      if (wanted && !closing && isFree()) recycleWanted();
    });
  }

  function current(): PgliteThreadSession {
    if (!thread) throw lastOpenError ?? new Error('the PGlite thread is not open');
    return thread;
  }

  let lastOpenError: Error | undefined;
  async function reopen(): Promise<void> {
    try {
      thread = await open();
      lastOpenError = undefined;
      baseline = rss();
    } catch (error) {
      lastOpenError = error as Error;
    }
  }

  /** The recycle itself; the caller has checked that the session is free. */
  async function swap(): Promise<RecycleReport> {
    const started = performance.now();
    const old = thread as PgliteThreadSession;
    const rssBefore = rss();
    held = 0;
    let wasmBytesBefore = 0;
    let finish!: () => void;
    swapping = new Promise((resolve) => {
      finish = resolve;
    });
    try {
      wasmBytesBefore = await old.memoryBytes();
      if (options.timeStatements) addTimes(earlierTimes, await old.statementTimes());
      await old.query('checkpoint');
    } catch (error) {
      // The old thread still serves: nothing was closed.
      swapping = undefined;
      finish();
      throw error;
    }
    thread = undefined;
    await old.close().catch(() => undefined);
    await reopen();
    swapping = undefined;
    finish();
    if (lastOpenError) throw lastOpenError;
    recycles++;
    return { wasmBytesBefore, rssBefore, rssAfter: rss(), durationMs: performance.now() - started, held };
  }

  return {
    get closed() {
      return closedForGood || (swapping === undefined && thread !== undefined && thread.closed);
    },
    get inTransaction() {
      return thread?.inTransaction ?? false;
    },
    get recycles() {
      return recycles;
    },
    observe(listener, onError) {
      observers.push([listener, onError]);
    },
    query<R>(sql: string, params?: readonly unknown[]) {
      return dispatch((session) => session.query<R>(sql, params));
    },
    memoryBytes: () => dispatch((session) => session.memoryBytes()),
    async statementTimes() {
      const times = new Map(earlierTimes);
      addTimes(times, await dispatch((session) => session.statementTimes()));
      return [...times]
        .map(([statement, time]) => ({ statement, ...time }))
        .sort((a, b) => b.milliseconds - a.milliseconds);
    },
    async recycle() {
      for (;;) {
        while (swapping) await swapping;
        if (isFree()) return swap();
        if (inFlight > 0) await new Promise<void>((resolve) => idleWaiters.push(resolve));
        else if (thread?.inTransaction) await new Promise((resolve) => setTimeout(resolve, 10));
        else if (!thread) await dispatch(async () => undefined);
      }
    },
    async close() {
      closing = true;
      if (ticker) clearInterval(ticker);
      while (swapping) await swapping;
      closedForGood = true;
      idleWaiters = [];
      await thread?.close();
    },
  };
}

function addTimes(into: Map<string, { count: number; milliseconds: number }>, times: StatementTime[]): void {
  for (const { statement, count, milliseconds } of times) {
    const known = into.get(statement) ?? { count: 0, milliseconds: 0 };
    into.set(statement, { count: known.count + count, milliseconds: known.milliseconds + milliseconds });
  }
}
