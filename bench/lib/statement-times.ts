/**
 * BENCH_STATEMENT_TIMES=1: every statement is timed (on PGlite's thread, or on a server from
 * the pool's request to the answer), and the bench prints where the database's time went (the
 * busiest statements, their count and milliseconds; on PGlite's thread also its CPU
 * milliseconds, which a shared machine's waits for a core do not inflate).
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { Database } from '../../src/db/database.js';

export const timeStatements = process.env.BENCH_STATEMENT_TIMES === '1';

export async function printStatementTimes(database: Database, top = 12): Promise<void> {
  if (!timeStatements || !database.statementTimes) return;
  const times = await database.statementTimes();
  const total = times.reduce((sum, time) => sum + time.milliseconds, 0);
  const cpu = times.reduce((sum, time) => sum + (time.cpuMilliseconds ?? 0), 0);
  const where = database.kind === 'pglite' ? 'PGlite thread' : 'server, pool wait and round trip included';
  const cpuNote = cpu > 0 ? `, ${Math.round(cpu)} ms of the thread's CPU` : '';
  console.log(`  database time per statement (${where}, ${Math.round(total)} ms in all${cpuNote}):`);
  for (const time of times.slice(0, top))
    console.log(
      `    ${time.milliseconds.toFixed(0).padStart(7)} ms ${cpu > 0 ? `${(time.cpuMilliseconds ?? 0).toFixed(0).padStart(7)} ms CPU ` : ''}${String(time.count).padStart(7)} x  ${time.statement}`,
    );
}

/**
 * CPU milliseconds of the process and of its main thread so far (Linux schedstat: nanoseconds
 * on a core; 0 where it cannot be read). Differences of two readings compare runs on a shared
 * machine better than wall time.
 */
export function cpuNow(): { process: number; mainThread: number; threads: Map<string, number> } {
  const usage = process.cpuUsage();
  let mainThread = 0;
  try {
    mainThread = Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    mainThread = 0;
  }
  return { process: (usage.user + usage.system) / 1000, mainThread, threads: threadCpu() };
}

/** CPU milliseconds of every thread of the process by thread id (Linux; empty elsewhere). */
function threadCpu(): Map<string, number> {
  const threads = new Map<string, number>();
  try {
    for (const task of readdirSync('/proc/self/task'))
      threads.set(
        task,
        Number(readFileSync(`/proc/self/task/${task}/schedstat`, 'utf8').split(' ')[0]) / 1e6,
      );
  } catch {
    // a thread that ended while being read: the others are still worth showing
  }
  return threads;
}

/** The busiest threads between two readings, as `id: seconds` (the main thread's id is the pid). */
export function busiestThreads(
  start: ReturnType<typeof cpuNow>,
  end: ReturnType<typeof cpuNow>,
  top = 6,
): string {
  return [...end.threads]
    .map(([id, milliseconds]) => [id, milliseconds - (start.threads.get(id) ?? 0)] as const)
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(
      ([id, milliseconds]) =>
        `${id === String(process.pid) ? 'main' : id} ${(milliseconds / 1000).toFixed(2)}`,
    )
    .join(', ');
}
