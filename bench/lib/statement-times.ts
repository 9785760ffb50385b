/**
 * BENCH_STATEMENT_TIMES=1: every statement is timed (on PGlite's thread, or on a server from
 * the pool's request to the answer), and the bench prints where the database's time went (the
 * busiest statements, their count and milliseconds).
 */
import type { Database } from '../../src/db/database.js';

export const timeStatements = process.env.BENCH_STATEMENT_TIMES === '1';

export async function printStatementTimes(database: Database, top = 12): Promise<void> {
  if (!timeStatements || !database.statementTimes) return;
  const times = await database.statementTimes();
  const total = times.reduce((sum, time) => sum + time.milliseconds, 0);
  const where = database.kind === 'pglite' ? 'PGlite thread' : 'server, pool wait and round trip included';
  console.log(`  database time per statement (${where}, ${Math.round(total)} ms in all):`);
  for (const time of times.slice(0, top))
    console.log(
      `    ${time.milliseconds.toFixed(0).padStart(7)} ms ${String(time.count).padStart(7)} x  ${time.statement}`,
    );
}
