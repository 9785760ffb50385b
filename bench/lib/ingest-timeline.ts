/**
 * BENCH_TIMELINE=1 with bench:ingest: where an ingestion's wall time went, per stage, read from
 * its lineage (every message's queued_at, started_at and finished_at) after the run. started_at
 * is taken when the processor has the message in hand (it may still wait for an adapter slot or
 * a batch), finished_at when the adapter answered; the next stage's queued_at is the parent's
 * finish being durable. So per stage: `wait` = queued to in hand (the queue, the stage's
 * prefetch window full), `call` = in hand to answered (slot or batch wait, then the adapter),
 * `settle` = answered to the outputs queued (the group-committed finish); and `busy`: the mean
 * messages between in hand and answered over the stage's span, against its concurrency.
 */
import { sql } from 'kysely';
import type { Database } from '../../src/db/database.js';
import { threadCpu } from './thread-cpu.js';

interface Row {
  stage: string;
  message_id: string;
  correlation_id: string | null;
  queued: number;
  started: number | null;
  finished: number | null;
}

export async function printIngestTimeline(database: Database, executionId: string): Promise<void> {
  const result = await sql<Row>`
    select stage, message_id, correlation_id,
           extract(epoch from queued_at) * 1000 as queued,
           extract(epoch from started_at) * 1000 as started,
           extract(epoch from finished_at) * 1000 as finished
      from lineage where execution_id = ${executionId}`.execute(database.db);
  const rows = result.rows.map((row) => ({
    ...row,
    queued: Number(row.queued),
    started: row.started === null ? null : Number(row.started),
    finished: row.finished === null ? null : Number(row.finished),
  }));
  const origin = Math.min(...rows.map((row) => row.queued));
  /** The earliest output of each message: its finish became durable by then. */
  const settledAt = new Map<string, number>();
  for (const row of rows) {
    if (!row.correlation_id) continue;
    const previous = settledAt.get(row.correlation_id);
    if (previous === undefined || row.queued < previous) settledAt.set(row.correlation_id, row.queued);
  }
  const stages = [...new Set(rows.map((row) => row.stage))].sort(
    (a, b) =>
      Math.min(...rows.filter((row) => row.stage === a).map((row) => row.queued)) -
      Math.min(...rows.filter((row) => row.stage === b).map((row) => row.queued)),
  );
  const seconds = (ms: number) => (ms / 1000).toFixed(2);
  const end = Math.max(...rows.map((row) => row.finished ?? row.queued)) - origin;
  const buckets = Math.ceil(end / 1000);
  console.log(
    `  timeline (BENCH_TIMELINE, s from the init message's queueing; means per message): stage | n | first in hand - last answered | wait | call | settle | busy`,
  );
  for (const stage of stages) {
    const mine = rows.filter((row) => row.stage === stage && row.started !== null && row.finished !== null);
    if (mine.length === 0) continue;
    const first = Math.min(...mine.map((row) => row.started as number)) - origin;
    const last = Math.max(...mine.map((row) => row.finished as number)) - origin;
    const mean = (values: number[]) =>
      values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);
    const wait = mean(mine.map((row) => (row.started as number) - row.queued));
    const call = mean(mine.map((row) => (row.finished as number) - (row.started as number)));
    const settles = mine
      .map((row) => (settledAt.get(row.message_id) ?? Number.NaN) - (row.finished as number))
      .filter((value) => Number.isFinite(value));
    const busy = (call * mine.length) / Math.max(1, last - first);
    const perSecond = new Array<number>(buckets).fill(0);
    for (const row of mine) {
      const bucket = Math.min(buckets - 1, Math.floor(((row.finished as number) - origin) / 1000));
      perSecond[bucket] = (perSecond[bucket] ?? 0) + 1;
    }
    console.log(
      `    ${stage.padEnd(20)} ${String(mine.length).padStart(5)} | ${seconds(first)} - ${seconds(last)} | ${wait.toFixed(0)} ms | ${call.toFixed(0)} ms | ${settles.length > 0 ? `${mean(settles).toFixed(0)} ms` : '-'} | ${busy.toFixed(1)}`,
    );
    console.log(`      answered per second: ${perSecond.join(' ')}`);
  }
}

/**
 * Samples this process's threads every `everyMs` (BENCH_TIMELINE): per interval, the share of
 * a core the main thread, the busiest other thread (PGlite's, embedded) and the rest used, so a
 * run that waits shows as intervals where neither is near 100%.
 */
export function sampleThreads(everyMs = 1000): { stop(): string } {
  const samples: string[] = [];
  let previous = threadCpu();
  const timer = setInterval(() => {
    const now = threadCpu();
    let main = 0;
    const others: number[] = [];
    for (const [tid, spent] of now) {
      const then = previous.get(tid) ?? { user: 0, system: 0 };
      const used = spent.user + spent.system - then.user - then.system;
      if (tid === process.pid) main = used;
      else others.push(used);
    }
    others.sort((a, b) => b - a);
    const busiest = others[0] ?? 0;
    const rest = others.slice(1).reduce((sum, value) => sum + value, 0);
    const percent = (seconds: number) => String(Math.round((seconds * 1000 * 100) / everyMs));
    samples.push(`${percent(main)}/${percent(busiest)}/${percent(rest)}`);
    previous = now;
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return `  threads, % of a core per ${everyMs} ms (main/busiest other/rest): ${samples.join(' ')}`;
    },
  };
}
