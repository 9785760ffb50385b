/**
 * npx tsx bench/finish.ts -- [count=100000] [batch=1000]
 * The finish statement alone (src/db/finish-statement.ts), without the engine around it:
 * `count` queued messages of one execution on PGlite (worker thread, data dir), finished `batch`
 * at a time through the repository (one in 997 failed), timed in wall and process CPU seconds.
 * The CPU figure moves less with other jobs on the machine, so compare checkouts by it, run
 * alternately. BENCH_EXPLAIN=1 also prints the median planning and execution time of one
 * finish statement per batch (EXPLAIN ANALYZE, on a second execution of the same size).
 * It exits 1 unless the execution completes once its last message is finished
 * (BENCH_BREAK=unfinished leaves the last batch out).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CompiledQuery } from 'kysely';
import { openDatabase } from '../src/db/database.js';
import type { FinishRequest } from '../src/db/execution-types.js';
import { createExecutionsRepository } from '../src/db/executions-repository.js';
import { insertConfig, insertExecution, queuedMessage } from '../test/helpers/execution-rows.js';
import { abort, benchBreak } from './lib/checks.js';

const count = Number(process.argv[2] ?? 100_000);
const batch = Number(process.argv[3] ?? 1000);
const unfinished = benchBreak('unfinished');

const folder = await mkdtemp(path.join(os.tmpdir(), 'weir-bench-finish-'));
const database = await openDatabase({ dataDir: path.join(folder, 'data'), pgliteThread: 'worker' });
const configId = await insertConfig(database.db);
const repository = createExecutionsRepository(database.db);

/** An execution with `count` queued messages (its init message finished); their ids. */
async function queued(): Promise<{ id: string; children: string[] }> {
  const init = queuedMessage(null, new Uint8Array(40));
  const id = await insertExecution(database.db, configId, init);
  const children = Array.from({ length: count }, () => queuedMessage(init.message_id, new Uint8Array(40)));
  for (let start = 0; start < count; start += 20_000)
    await repository.addMessages(id, children.slice(start, start + 20_000), new Date());
  await repository.finishMessages([requestFor(id, init.message_id, 0)]);
  return { id, children: children.map((child) => child.message_id) };
}

function requestFor(executionId: string, messageId: string, index: number): FinishRequest {
  const failed = index % 997 === 5;
  const at = new Date();
  return {
    message: {
      message_id: messageId,
      execution_id: executionId,
      started_at: at,
      finished_at: at,
      attempts: 1,
    },
    status: failed ? 'failed' : 'completed',
    error: failed ? 'bench failure' : null,
    outputs: [],
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] as number;

const timed = await queued();
const cpu = process.cpuUsage();
const started = performance.now();
let ended: string | undefined;
for (let start = 0; start < count - (unfinished ? batch : 0); start += batch) {
  const requests = timed.children
    .slice(start, start + batch)
    .map((messageId, offset) => requestFor(timed.id, messageId, start + offset));
  for (const outcome of await repository.finishMessages(requests))
    if (outcome.finishedExecution) ended = outcome.finishedExecution.status;
}
const seconds = (performance.now() - started) / 1000;
const used = process.cpuUsage(cpu);
if (ended !== 'completed') abort(`the execution did not complete (${ended ?? 'still running'})`);
console.log(
  `finish of ${count} messages, ${batch} a statement: ${seconds.toFixed(2)} s, process CPU ${((used.user + used.system) / 1e6).toFixed(2)} s`,
);

if (process.env.BENCH_EXPLAIN === '1') {
  // Imported here: the timed part also runs on checkouts from before finish-statement.ts.
  const { finishStatement } = await import('../src/db/finish-statement.js');
  const explained = await queued();
  const planning: number[] = [];
  const execution: number[] = [];
  // The last batch would drain the execution: left out, the statements stay comparable.
  for (let start = 0; start + batch < count; start += batch) {
    const requests = explained.children
      .slice(start, start + batch)
      .map((messageId, offset) => requestFor(explained.id, messageId, start + offset));
    const compiled = finishStatement(requests, new Date()).compile(database.db);
    const result = await database.db.executeQuery<{ 'QUERY PLAN': string }>(
      CompiledQuery.raw(`explain (analyze, summary) ${compiled.sql}`, [...compiled.parameters]),
    );
    const text = result.rows.map((row) => row['QUERY PLAN']).join('\n');
    planning.push(Number(/Planning Time: ([\d.]+)/.exec(text)?.[1]));
    execution.push(Number(/Execution Time: ([\d.]+)/.exec(text)?.[1]));
  }
  console.log(
    `one statement of ${batch}: planning median ${median(planning).toFixed(1)} ms, execution median ${median(execution).toFixed(1)} ms`,
  );
}
await database.close();
await rm(folder, { recursive: true, force: true });
