/**
 * One watcher of execution changes per process, shared by every open executions event stream
 * (execution-events.ts): however many consoles listen, the database is read once per tick.
 * Executions may run on other instances, so changes are read from the database (`updated_at`
 * moves with every batch of finished messages and every status change), and a local
 * execution.* event only makes the next read come sooner. The watcher runs only while someone
 * listens.
 */
import type { Kysely } from 'kysely';
import type { ExecutionRow } from '../db/execution-types.js';
import type { DatabaseSchema } from '../db/schema.js';
import type { EventBus } from '../events/event-bus.js';
import { presentNamedExecutions } from './present.js';

export type PresentedExecution = Awaited<ReturnType<typeof presentNamedExecutions>>[number];
export type FeedListener = (executions: readonly PresentedExecution[]) => void;

export interface ExecutionFeed {
  /** Hands over every execution that changes from now on; returns the function that stops it. */
  subscribe(listener: FeedListener): () => void;
  listeners(): number;
  close(): void;
}

/**
 * Rows read again after they were seen: instances' clocks differ, and a row written by another
 * instance may carry an `updated_at` a little older than one already read.
 */
const CLOCK_MARGIN_MS = 5_000;
/** Changes read per tick at most; the rest come on the next tick. */
const BATCH = 200;

export function createExecutionFeed(options: {
  db: Kysely<DatabaseSchema>;
  events: EventBus;
  now: () => Date;
  pollMs?: number;
  onError?: (error: unknown) => void;
}): ExecutionFeed {
  const pollMs = options.pollMs ?? 1000;
  const listeners = new Set<FeedListener>();
  /** id -> the `updated_at` last handed over, so a row read twice is sent once. */
  const seen = new Map<string, number>();
  let since = 0;
  let timer: NodeJS.Timeout | undefined;
  let reading: Promise<void> | undefined;
  let unsubscribeEvents: (() => void) | undefined;

  async function read(): Promise<void> {
    const from = new Date(since - CLOCK_MARGIN_MS);
    const rows: ExecutionRow[] = await options.db
      .selectFrom('executions')
      .selectAll()
      .where('updated_at', '>', from)
      .orderBy('updated_at')
      .limit(BATCH)
      .execute();
    const changed = rows.filter((row) => seen.get(row.id) !== new Date(row.updated_at).getTime());
    for (const row of rows) {
      const at = new Date(row.updated_at).getTime();
      seen.set(row.id, at);
      since = Math.max(since, at);
    }
    // Forget what can no longer be read again.
    for (const [id, at] of seen) if (at < since - 2 * CLOCK_MARGIN_MS) seen.delete(id);
    if (changed.length === 0 || listeners.size === 0) return;
    const presented = await presentNamedExecutions(options.db, changed);
    for (const listener of listeners) listener(presented);
  }

  function tick(): void {
    timer = undefined;
    if (listeners.size === 0 || reading) return;
    reading = read()
      .catch((error) => options.onError?.(error))
      .finally(() => {
        reading = undefined;
        schedule(pollMs);
      });
  }

  function schedule(delayMs: number): void {
    if (listeners.size === 0) return;
    if (timer) {
      if (delayMs >= pollMs) return;
      clearTimeout(timer);
    }
    timer = setTimeout(tick, delayMs);
  }

  function stop(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    unsubscribeEvents?.();
    unsubscribeEvents = undefined;
    seen.clear();
  }

  return {
    subscribe(listener) {
      if (listeners.size === 0) {
        since = options.now().getTime();
        // A local start or end is read at once rather than at the next tick.
        unsubscribeEvents = options.events.subscribe((event) => {
          if (event.type.startsWith('execution.')) schedule(0);
        });
        schedule(pollMs);
      }
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0) stop();
      };
    },
    listeners: () => listeners.size,
    close() {
      listeners.clear();
      stop();
    },
  };
}
