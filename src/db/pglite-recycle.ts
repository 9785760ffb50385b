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
  const session = new RecyclingSession(startThread, options);
  await session.start();
  return session;
}

type Observer = [(report: RecycleReport) => void, (error: unknown) => void];

class RecyclingSession implements RecyclingPgliteSession {
  private readonly rss: () => number;
  private readonly observers: Observer[];
  private thread: PgliteThreadSession | undefined;
  private baseline = 0;
  /** Set while a recycle (or a reopen after a failed one) runs: statements wait for it. */
  private swapping: Promise<void> | undefined;
  private held = 0;
  private inFlight = 0;
  private recycleCount = 0;
  private closing = false;
  private closedForGood = false;
  /** A quiet window found the process grown: recycle at the next moment the session is free. */
  private wanted = false;
  /** Time with a statement on its way in the current window, and since when one has been. */
  private busyMs = 0;
  private busySince = 0;
  /** Resolved when no statement is on its way (for a recycle asked for while busy). */
  private idleWaiters: (() => void)[] = [];
  /** Statement times of the threads recycled so far, so a benchmark's totals survive. */
  private readonly earlierTimes = new Map<string, Omit<StatementTime, 'statement'>>();
  private ticker: NodeJS.Timeout | undefined;
  private lastOpenError: Error | undefined;

  constructor(
    private readonly startThread: () => Promise<PgliteThreadSession>,
    private readonly options: PgliteRecycleOptions & { timeStatements?: boolean },
  ) {
    this.rss = options.rss ?? (() => process.memoryUsage.rss());
    this.observers = [[options.onRecycle ?? (() => {}), options.onError ?? (() => {})]];
  }

  async start(): Promise<void> {
    this.thread = await this.open();
    this.baseline = this.options.createdDatabase ? Number.NEGATIVE_INFINITY : this.rss();
    // An idle service still polls (outbox, schedules, sweeps: a few statements a second), so
    // "idle" is a window in which statements kept the session busy under QUIET_SHARE of the time.
    if (this.options.idleMs > 0) this.ticker = setInterval(() => this.onWindow(), this.options.idleMs);
    // An idle service with nothing else to do may exit: the recycle is no reason to stay.
    this.ticker?.unref();
  }

  get closed(): boolean {
    return (
      this.closedForGood || (this.swapping === undefined && this.thread !== undefined && this.thread.closed)
    );
  }

  get inTransaction(): boolean {
    return this.thread?.inTransaction ?? false;
  }

  get recycles(): number {
    return this.recycleCount;
  }

  /** An arrow: the database hands it on detached. */
  observe = (listener: (report: RecycleReport) => void, onError: (error: unknown) => void): void => {
    this.observers.push([listener, onError]);
  };

  query<R>(sql: string, params?: readonly unknown[]) {
    return this.dispatch((session) => session.query<R>(sql, params));
  }

  memoryBytes(): Promise<number> {
    return this.dispatch((session) => session.memoryBytes());
  }

  async statementTimes(): Promise<StatementTime[]> {
    const times = new Map(this.earlierTimes);
    addTimes(times, await this.dispatch((session) => session.statementTimes()));
    return [...times]
      .map(([statement, time]) => ({ statement, ...time }))
      .sort((a, b) => b.milliseconds - a.milliseconds);
  }

  async recycle(): Promise<RecycleReport> {
    for (;;) {
      while (this.swapping) await this.swapping;
      if (this.isFree()) return this.swap();
      if (this.inFlight > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
      else if (this.thread?.inTransaction) await new Promise((resolve) => setTimeout(resolve, 10));
      else if (!this.thread) await this.dispatch(async () => undefined);
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.ticker) clearInterval(this.ticker);
    while (this.swapping) await this.swapping;
    this.closedForGood = true;
    this.idleWaiters = [];
    await this.thread?.close();
  }

  private async open(): Promise<PgliteThreadSession> {
    const session = await this.startThread();
    try {
      for (const statement of this.options.sessionSetup ?? []) await session.query(statement);
    } catch (error) {
      // The setup's error is the one to report; a failed close only says so too.
      await session.close().catch((closeError: unknown) => this.reportError(closeError));
      throw error;
    }
    return session;
  }

  private reportError(error: unknown): void {
    for (const [, onError] of this.observers) onError(error);
  }

  private onWindow(): void {
    const now = performance.now();
    const busy = this.busyMs + (this.inFlight > 0 ? now - this.busySince : 0);
    this.busyMs = 0;
    if (this.inFlight > 0) this.busySince = now;
    if (this.closing || this.swapping || busy >= QUIET_SHARE * this.options.idleMs) return;
    const resident = this.rss();
    // Growth counts from the lowest RSS of a quiet window since the thread opened: right after
    // a reopen the allocator may not have given the old thread's memory back yet.
    if (resident - this.baseline < this.options.minGrowthBytes) {
      this.baseline = Math.min(this.baseline, resident);
      return;
    }
    this.wanted = true;
    if (this.isFree()) this.recycleWanted();
  }

  private isFree(): boolean {
    return (
      this.inFlight === 0 &&
      this.swapping === undefined &&
      this.thread !== undefined &&
      !this.thread.inTransaction
    );
  }

  private recycleWanted(): void {
    this.wanted = false;
    void this.swap().then(
      (report) => {
        for (const [listener] of this.observers) listener(report);
      },
      (error) => this.reportError(error),
    );
  }

  /** Sends work to the current thread, or holds it, in arrival order, until the swap ends. */
  private dispatch<T>(work: (session: PgliteThreadSession) => Promise<T>): Promise<T> {
    if (this.inFlight++ === 0) this.busySince = performance.now();
    let sent: Promise<T>;
    if (this.swapping) {
      this.held++;
      sent = this.swapping.then(() => work(this.current()));
    } else if (this.thread === undefined) {
      // The last reopen failed: this statement tries again.
      this.swapping = this.reopen().finally(() => {
        this.swapping = undefined;
      });
      sent = this.swapping.then(() => work(this.current()));
    } else sent = work(this.thread);
    return sent.finally(() => {
      if (--this.inFlight > 0) return;
      this.busyMs += performance.now() - this.busySince;
      for (const waiter of this.idleWaiters.splice(0)) waiter();
      // The commit that ends a transaction lands here too: a wanted recycle waits for no more.
      if (this.wanted && !this.closing && this.isFree()) this.recycleWanted();
    });
  }

  private current(): PgliteThreadSession {
    if (!this.thread) throw this.lastOpenError ?? new Error('the PGlite thread is not open');
    return this.thread;
  }

  private async reopen(): Promise<void> {
    try {
      this.thread = await this.open();
      this.lastOpenError = undefined;
      this.baseline = this.rss();
    } catch (error) {
      this.lastOpenError = error as Error;
    }
  }

  /** The recycle itself; the caller has checked that the session is free. */
  private async swap(): Promise<RecycleReport> {
    const started = performance.now();
    const old = this.thread as PgliteThreadSession;
    const rssBefore = this.rss();
    this.held = 0;
    let finish!: () => void;
    this.swapping = new Promise((resolve) => {
      finish = resolve;
    });
    let wasmBytesBefore: number;
    try {
      wasmBytesBefore = await old.memoryBytes();
      if (this.options.timeStatements) addTimes(this.earlierTimes, await old.statementTimes());
      await old.query('checkpoint');
    } catch (error) {
      // The old thread still serves: nothing was closed.
      this.swapping = undefined;
      finish();
      throw error;
    }
    this.thread = undefined;
    // The checkpoint is done: the thread ends whatever its close says (it is reported).
    await old.close().catch((error: unknown) => this.reportError(error));
    await this.reopen();
    this.swapping = undefined;
    finish();
    if (this.lastOpenError) throw this.lastOpenError;
    this.recycleCount++;
    const rssAfter = this.rss();
    return { wasmBytesBefore, rssBefore, rssAfter, durationMs: performance.now() - started, held: this.held };
  }
}

function addTimes(into: Map<string, Omit<StatementTime, 'statement'>>, times: StatementTime[]): void {
  for (const { statement, count, milliseconds, cpuMilliseconds } of times) {
    const known = into.get(statement) ?? { count: 0, milliseconds: 0 };
    into.set(statement, {
      count: known.count + count,
      milliseconds: known.milliseconds + milliseconds,
      cpuMilliseconds:
        cpuMilliseconds === undefined
          ? known.cpuMilliseconds
          : (known.cpuMilliseconds ?? 0) + cpuMilliseconds,
    });
  }
}
