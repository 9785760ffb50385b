/**
 * When a model's HNSW index is built (issue 35). It is built once, over the loaded rows, after
 * the first execution that wrote the model's vectors has ended: building over loaded rows is far
 * cheaper than growing the graph row by row.
 *
 * On a PostgreSQL server the build starts as the execution ends: it holds one connection of
 * the pool, and without it every vector search there scans every vector.
 *
 * On PGlite it waits for a quiet moment: no execution running, no search in progress, and
 * none begun or ended for `quietMs`. The build is one statement that holds PGlite's only session for seconds (2.7 s of
 * CPU for the 8,565 segments of the PostgreSQL manual, 68 s at 100,000), and every search
 * needs a statement there (its query's terms), so a build at the end of a run made the first
 * searches after it wait for the graph. They do not need it: once the in-memory index is
 * filled (src/search/keyword-memory-index.ts) it ranks every vector exactly, and until the
 * graph exists the search statement scans every vector exactly (search-service.ts); the graph
 * only makes the start-up fill and the stale fallback fast. A model left without a graph (the
 * service stopped before a quiet moment) is built at the first quiet moment after the next start.
 */
import type { EventBus } from '../events/event-bus.js';
import { onSearchActivity } from '../search-index/search-activity.js';

export interface VectorIndexBuilds {
  /** The build in progress, if any (shutdown waits for it; one not begun is left for the next start). */
  whenIdle(): Promise<void>;
  /** Resolves after the next build has run (at once when none is pending): benches and tests. */
  whenBuilt(): Promise<void>;
  /** Cancels a build not begun; resolves when the one in progress ends. */
  stop(): Promise<void>;
}

export interface VectorIndexBuildOptions {
  build: () => Promise<string[]>;
  events: EventBus;
  /** The root Kysely instance: searches on it postpone a deferred build (search-activity.ts). */
  db: object;
  /** Wait for a quiet moment (PGlite) instead of building as each execution ends (server). */
  deferred: boolean;
  quietMs: number;
  logger: { info(object: object, message: string): void; error(object: object, message: string): void };
}

/** Quiet time before a deferred build: a run's end and a burst of searches pass first. */
export const vectorIndexQuietMs = 5_000;

export function scheduleVectorIndexBuilds(options: VectorIndexBuildOptions): VectorIndexBuilds {
  const { events, deferred, quietMs, logger } = options;
  let inProgress: Promise<void> = Promise.resolve();
  let pending = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const running = new Set<string>();
  let searching = 0;
  const waiters: Array<() => void> = [];

  function build() {
    pending = false;
    const released = waiters.splice(0);
    inProgress = inProgress
      .then(() => options.build())
      .then(
        (models) => {
          if (models.length > 0) logger.info({ models }, 'vector indexes built');
        },
        (error: unknown) => logger.error({ err: error }, 'building vector indexes failed'),
      )
      .finally(() => {
        for (const release of released) release();
      });
  }

  function arm() {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (!pending || stopped) return;
    timer = setTimeout(() => {
      timer = undefined;
      if (running.size === 0 && searching === 0) build();
    }, quietMs);
    timer.unref();
  }

  const unsubscribeEvents = events.subscribe((event) => {
    if (event.type === 'execution.started') {
      running.add(event.execution_id);
      arm();
    } else if (isExecutionEnd(event.type)) {
      running.delete(event.execution_id);
      if (stopped) return;
      if (!deferred) build();
      else {
        pending = true;
        arm();
      }
    }
  });
  const unsubscribeSearches = deferred
    ? onSearchActivity(options.db, (change) => {
        searching += change === 'started' ? 1 : -1;
        arm();
      })
    : () => {};
  if (deferred) {
    // A model whose graph a stop before the quiet moment left unbuilt (a look-up when none is).
    pending = true;
    arm();
  }

  return {
    whenIdle: () => inProgress,
    whenBuilt: () => (pending ? new Promise<void>((resolve) => waiters.push(resolve)) : inProgress),
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      unsubscribeEvents();
      unsubscribeSearches();
      for (const release of waiters.splice(0)) release();
      await inProgress;
    },
  };
}

function isExecutionEnd(type: string): boolean {
  return type === 'execution.completed' || type === 'execution.failed' || type === 'execution.cancelled';
}
