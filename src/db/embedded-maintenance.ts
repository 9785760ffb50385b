/**
 * Routine VACUUM for the embedded database. PGlite runs Postgres in single-user mode, so no
 * autovacuum ever runs: the row versions left behind by updates (finished lineage rows,
 * execution counters, webhook results, catalogue upserts) are never reclaimed, tables and
 * indexes only grow, and transaction ids are never frozen. A long-running embedded instance
 * that commits a thousand transactions a second would reach Postgres's wraparound stop within
 * weeks. This does what autovacuum would, on a timer: a plain VACUUM (ANALYZE) of the database
 * (cheap for pages the visibility map marks all-visible), with FREEZE once the oldest
 * unfrozen transaction id is older than `freezeAge`. A PostgreSQL server has its own
 * autovacuum, so this runs for PGlite only.
 *
 * PGlite has one session: while VACUUM runs, other statements wait for it. The interval keeps
 * that to a short pause now and then.
 */
import { sql } from 'kysely';
import type { Database } from './database.js';

export interface EmbeddedMaintenanceOptions {
  /** Time between runs (default 10 minutes). */
  intervalMs?: number;
  /** Transaction id age that makes a run freeze (default 100 million; Postgres stops near 2 billion). */
  freezeAge?: number;
  onError?: (error: unknown) => void;
  onRun?: (report: MaintenanceReport) => void;
}

export interface MaintenanceReport {
  froze: boolean;
  /** age(datfrozenxid) before the run. */
  transactionAge: number;
  durationMs: number;
}

export interface EmbeddedMaintenance {
  /** Runs once now (after a run in progress). */
  runOnce(): Promise<MaintenanceReport>;
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
}

export const DEFAULT_MAINTENANCE_INTERVAL_MS = 10 * 60_000;
export const DEFAULT_FREEZE_AGE = 100_000_000;

export function startEmbeddedMaintenance(
  database: Database,
  options: EmbeddedMaintenanceOptions = {},
): EmbeddedMaintenance {
  const freezeAge = options.freezeAge ?? DEFAULT_FREEZE_AGE;
  let running: Promise<MaintenanceReport> | undefined;
  let stopped = false;

  async function run(): Promise<MaintenanceReport> {
    const started = performance.now();
    const { rows } = await sql<{ age: number }>`
      select age(datfrozenxid)::int as age from pg_database where datname = current_database()`.execute(
      database.db,
    );
    const transactionAge = rows[0]?.age ?? 0;
    const froze = transactionAge >= freezeAge;
    await sql.raw(froze ? 'vacuum (freeze, analyze)' : 'vacuum (analyze)').execute(database.db);
    return { froze, transactionAge, durationMs: performance.now() - started };
  }

  function runOnce(): Promise<MaintenanceReport> {
    const previous = running ?? Promise.resolve(undefined);
    const next = previous.catch(() => undefined).then(run);
    running = next;
    void next
      .then(options.onRun, () => {})
      .finally(() => {
        if (running === next) running = undefined;
      });
    return next;
  }

  const timer =
    database.kind === 'pglite'
      ? setInterval(() => {
          if (stopped || running) return;
          runOnce().catch((error) => options.onError?.(error));
        }, options.intervalMs ?? DEFAULT_MAINTENANCE_INTERVAL_MS)
      : undefined;
  timer?.unref();

  return {
    runOnce,
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
