/**
 * PGlite on a thread of its own. PGlite is Postgres compiled to WebAssembly and runs on the
 * thread that creates it, so in the service's thread every statement stops the event loop
 * (broker, HTTP, adapters) for as long as it runs. Here a worker thread owns the instance
 * and statements travel as messages: database work and the rest of the service use two
 * cores at once. Statements run one at a time in arrival order, as on PGlite's one session;
 * the dialect's transaction gate keeps transactions whole.
 */
import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../runtime/module-worker.js';
import { movableParameterMemory } from './array-parameter.js';

export interface PgliteSession {
  query<R>(
    sql: string,
    params?: readonly unknown[],
  ): Promise<{ rows: R[]; affectedRows?: number | undefined }>;
  close(): Promise<void>;
  readonly closed: boolean;
}

export interface PgliteThreadSession extends PgliteSession {
  /** Per-statement times, when the thread was started with `timeStatements` (else empty). */
  statementTimes(): Promise<StatementTime[]>;
  /** The size of PGlite's WebAssembly memory in bytes (it grows with work and never shrinks). */
  memoryBytes(): Promise<number>;
  /** Whether the session was inside a transaction after the last answered request. */
  readonly inTransaction: boolean;
}

export type ThreadRequest =
  | { id: number; kind: 'query'; sql: string; params: unknown[] }
  | { id: number; kind: 'statement-times' }
  | { id: number; kind: 'memory' }
  | { id: number; kind: 'close' };

/**
 * Time spent in PGlite per statement text (the first 80 characters, whitespace folded): wall
 * milliseconds, and the thread's CPU milliseconds (from /proc/thread-self/schedstat, where
 * Linux gives it; on a shared machine the wall time includes waits for a core).
 */
export interface StatementTime {
  statement: string;
  count: number;
  milliseconds: number;
  cpuMilliseconds?: number | undefined;
}

/**
 * `inTransaction`: whether PGlite's session was inside a transaction after the request (its
 * protocol's ready-for-query status), so the service thread knows when the session is free.
 */
export type ThreadReply = (
  | { id: number; rows: unknown[]; affectedRows?: number | undefined; error?: undefined }
  | { id: number; error: Record<string, unknown> }
) & { inTransaction?: boolean };

/** Rebuilds an error with the fields callers inspect (code, detail, constraint...). */
function reviveError(fields: Record<string, unknown>): Error {
  const error = new Error(String(fields.message ?? 'PGlite error'));
  Object.assign(error, fields);
  return error;
}

/** What the worker is started with (pglite-worker.ts). */
export interface PgliteWorkerData {
  dataDir: string | undefined;
  timeStatements: boolean;
  /** PGlite's start parameters (pglite-settings.ts); absent = PGlite's own. */
  startParams: string[] | undefined;
  /** Open only on a first message (sent once `openWhen` resolves), loading PGlite meanwhile. */
  openOnSignal: boolean;
  /** The thread's own idle heap collection (src/runtime/idle-collection.ts): its window, 0 = never. */
  idleCollectMs: number;
}

function createWorker(workerData: PgliteWorkerData): Worker {
  return startModuleWorker('db/pglite-worker', { workerData });
}

/**
 * Starts the worker and opens PGlite in `dataDir` (absent = in memory). The thread starts at
 * once; with `openWhen` it opens `dataDir` only after that resolves (the data dir's lock is
 * held), loading PGlite and compiling its WebAssembly in the meantime (issue 35).
 */
export async function startPgliteThread(
  dataDir: string | undefined,
  options: {
    timeStatements?: boolean;
    startParams?: string[];
    openWhen?: Promise<unknown>;
    idleCollectMs?: number;
  } = {},
): Promise<PgliteThreadSession> {
  const worker = createWorker({
    dataDir,
    timeStatements: options.timeStatements === true,
    startParams: options.startParams,
    openOnSignal: options.openWhen !== undefined,
    idleCollectMs: options.idleCollectMs ?? 0,
  });
  const pending = new Map<
    number,
    { resolve: (reply: ThreadReply) => void; reject: (error: Error) => void }
  >();
  let nextId = 1;
  let closed = false;
  let inTransaction = false;
  let exitError: Error | undefined;

  const ready = new Promise<void>((resolve, reject) => {
    pending.set(0, {
      resolve: (reply) => (reply.error ? reject(reviveError(reply.error)) : resolve()),
      reject,
    });
  });
  worker.on('message', (reply: ThreadReply) => {
    const waiter = pending.get(reply.id);
    pending.delete(reply.id);
    if (reply.inTransaction !== undefined) inTransaction = reply.inTransaction;
    // The thread keeps the process alive only while a statement is on its way.
    if (pending.size === 0) worker.unref();
    waiter?.resolve(reply);
  });
  const failAll = (error: Error) => {
    closed = true;
    exitError = error;
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
  };
  worker.on('error', (error) => failAll(error));
  worker.on('exit', (code) => failAll(new Error(`the PGlite thread stopped (exit code ${code})`)));

  /** Sends `request`, moving `movable` (memory nothing else holds) instead of copying it. */
  function send(request: ThreadRequest, movable: ArrayBuffer[] = []): Promise<ThreadReply> {
    if (exitError) return Promise.reject(exitError);
    return new Promise((resolve, reject) => {
      pending.set(request.id, { resolve, reject });
      worker.ref();
      worker.postMessage(request, movable);
    });
  }

  try {
    // Both awaited together: a thread that fails while the lock is being taken is reported too.
    await Promise.all([ready, options.openWhen?.then(() => worker.postMessage({ kind: 'open' }))]);
  } catch (error) {
    await worker.terminate();
    throw error;
  }
  worker.unref();

  return {
    get closed() {
      return closed;
    },
    get inTransaction() {
      return inTransaction;
    },
    async query<R>(sql: string, params: readonly unknown[] = []) {
      const reply = await send(
        { id: nextId++, kind: 'query', sql, params: [...params] },
        movableParameterMemory(params),
      );
      if (reply.error) throw reviveError(reply.error);
      return { rows: reply.rows as R[], affectedRows: reply.affectedRows };
    },
    async statementTimes() {
      const reply = await send({ id: nextId++, kind: 'statement-times' });
      if (reply.error) throw reviveError(reply.error);
      return reply.rows as StatementTime[];
    },
    async memoryBytes() {
      const reply = await send({ id: nextId++, kind: 'memory' });
      if (reply.error) throw reviveError(reply.error);
      return (reply.rows[0] as { bytes: number }).bytes;
    },
    async close() {
      if (closed) return;
      const reply = await send({ id: nextId++, kind: 'close' });
      closed = true;
      await worker.terminate();
      if (reply.error) throw reviveError(reply.error);
    },
  };
}
