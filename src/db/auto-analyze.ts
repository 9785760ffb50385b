/**
 * Planner statistics for tables that grow quickly. PGlite runs no autovacuum daemon, so a
 * table created empty keeps the statistics of an empty table however many rows it gets, and
 * the planner then picks plans made for a handful of rows (a bitmap scan and a sort of every
 * due webhook delivery instead of an index scan that stops at the limit). Callers report the
 * rows they write; the table is analysed in the background once they add up to its size at
 * the last analysis (at least 1,000 rows): each time it doubles, so a growing table is
 * analysed a logarithmic number of times (a fifth, as autovacuum does, cost a sampled ANALYZE
 * every few hundred webhook deliveries). On a PostgreSQL server this duplicates part of
 * autovacuum's work.
 * The analysis can be narrowed to the columns queries filter, join and sort on, from a smaller
 * sample (`statisticsTarget`, which sets the sample at 300 rows per unit): ANALYZE of every
 * column of 32,000 webhook deliveries at the default target (100, 30,000 rows sampled, the
 * bodies' text sorted for their statistics) cost PGlite about 150 ms of CPU, the six columns
 * the dispatcher and the API query at target 20 about 27 ms.
 */
import { type Kysely, sql } from 'kysely';

/** Rows written before a table's first analysis. */
const MINIMUM_ROWS = 1000;

export interface AutoAnalyzeOptions {
  /** Only these columns get statistics (the table's row count is kept current either way). */
  columns?: readonly string[];
  /** The sample and the statistics' detail (default_statistics_target for this ANALYZE). */
  statisticsTarget?: number;
}

export function createAutoAnalyze(
  db: Kysely<unknown>,
  table: string,
  options: AutoAnalyzeOptions = {},
): (rowsWritten: number) => void {
  const analyze = analyzeStatement(table, options.columns);
  const target = options.statisticsTarget;
  if (target !== undefined && !(Number.isInteger(target) && target >= 1 && target <= 10_000))
    throw new RangeError(`statistics target ${target} is not an integer from 1 to 10000`);
  const run = () =>
    target === undefined
      ? analyze.execute(db).then(() => undefined)
      : db.transaction().execute(async (transaction) => {
          await sql.raw(`set local default_statistics_target = ${target}`).execute(transaction);
          await analyze.execute(transaction);
        });
  let sinceLast = 0;
  let rowsAtLast = 0;
  let running = false;
  return (rowsWritten) => {
    sinceLast += rowsWritten;
    if (running || sinceLast < Math.max(MINIMUM_ROWS, rowsAtLast)) return;
    running = true;
    const added = sinceLast;
    sinceLast = 0;
    run()
      .then(
        () => {
          rowsAtLast += added;
        },
        // Statistics only: a failed ANALYZE is tried again after the next rows written.
        () => {
          sinceLast += added;
        },
      )
      .finally(() => {
        running = false;
      });
  };
}

function analyzeStatement(table: string, columns: readonly string[] | undefined) {
  if (!columns?.length) return sql`analyze ${sql.table(table)}`;
  return sql`analyze ${sql.table(table)} (${sql.join(columns.map((column) => sql.ref(column)))})`;
}
