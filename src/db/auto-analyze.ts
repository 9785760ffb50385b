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
 */
import { type Kysely, sql } from 'kysely';

/** Rows written before a table's first analysis. */
const MINIMUM_ROWS = 1000;

export function createAutoAnalyze(db: Kysely<unknown>, table: string): (rowsWritten: number) => void {
  let sinceLast = 0;
  let rowsAtLast = 0;
  let running = false;
  return (rowsWritten) => {
    sinceLast += rowsWritten;
    if (running || sinceLast < Math.max(MINIMUM_ROWS, rowsAtLast)) return;
    running = true;
    const added = sinceLast;
    sinceLast = 0;
    sql`analyze ${sql.table(table)}`
      .execute(db)
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
