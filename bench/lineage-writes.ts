/**
 * npx tsx bench/lineage-writes.ts -- [count=100000]
 * The lineage writes of bench:engine's fan-out without the engine around them: `count` messages
 * of one execution queued 2,000 a statement (addMessages, as a large fan-out's early chunks),
 * then finished 1,000 a statement (finishMessages, as the sink's group commit), on PGlite in a
 * data dir on its own thread. Prints the PGlite thread's CPU per statement kind: the figure to
 * compare checkouts and settings by on a shared machine (WEIR_PGLITE_SETTINGS applies).
 * BENCH_SQL_BEFORE runs a statement after the migrations (say, to try an index's cost);
 * BENCH_SQL_AFTER one after the run, and prints its rows (pg_stat_user_tables, say).
 * Exits 1 unless the execution completes once its last message is finished
 * (BENCH_BREAK=unfinished leaves the last batch out).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/database.js';
import type { FinishRequest, NewMessage } from '../src/db/execution-types.js';
import { createExecutionsRepository } from '../src/db/executions-repository.js';
import { parsePgliteSettings } from '../src/db/pglite-settings.js';
import { insertConfig, insertExecution, queuedMessage } from '../test/helpers/execution-rows.js';
import { abort, benchBreak } from './lib/checks.js';

const count = Number(process.argv[2] ?? 100_000);
const folder = await mkdtemp(path.join(os.tmpdir(), 'weir-bench-lineage-'));
const database = await openDatabase({
  dataDir: path.join(folder, 'data'),
  pgliteThread: 'worker',
  timeStatements: true,
  pgliteSettings: parsePgliteSettings(
    (process.env.WEIR_PGLITE_SETTINGS ?? '').split(',').filter((item) => item.trim().length > 0),
  ),
});
if (process.env.BENCH_SQL_BEFORE) await sql.raw(process.env.BENCH_SQL_BEFORE).execute(database.db);
const configId = await insertConfig(database.db);
const repository = createExecutionsRepository(database.db);
// bench:engine's rows: its route and stage names, and an envelope of its size (a msgpack'd
// synthetic_fanout output: about 330 bytes).
const message = (parent: string | null): NewMessage => ({
  ...queuedMessage(parent, randomBytes(330)),
  route_id: parent ? 'sink' : 'generate',
  stage: parent ? 'synthetic_sink' : 'synthetic_fanout',
  emitted_by: parent ? 'synthetic_fanout' : 'init',
});
const init = message(null);
const id = await insertExecution(database.db, configId, init);
const before = await database.statementTimes?.();
const cpuOf = (times: typeof before) =>
  (times ?? []).reduce((sum, time) => sum + (time.cpuMilliseconds ?? 0), 0);
const children = Array.from({ length: count }, () => message(init.message_id));
for (let start = 0; start < count; start += 2000)
  await repository.addMessages(id, children.slice(start, start + 2000), new Date());
const afterAdd = await database.statementTimes?.();
await repository.finishMessages([finishOf(init.message_id)]);
let ended: string | undefined;
const finished = benchBreak('unfinished') ? count - 1000 : count;
for (let start = 0; start < finished; start += 1000)
  for (const outcome of await repository.finishMessages(
    children.slice(start, start + 1000).map((child) => finishOf(child.message_id)),
  ))
    if (outcome.finishedExecution) ended = outcome.finishedExecution.status;
const afterFinish = await database.statementTimes?.();
if (ended !== 'completed') abort(`the execution did not complete (${ended ?? 'still running'})`);
console.log(
  `${count} messages: queue ${(cpuOf(afterAdd) - cpuOf(before)).toFixed(0)} ms, finish ${(cpuOf(afterFinish) - cpuOf(afterAdd)).toFixed(0)} ms of the PGlite thread's CPU`,
);
if (process.env.BENCH_SQL_AFTER)
  console.log((await sql.raw(process.env.BENCH_SQL_AFTER).execute(database.db)).rows);
await database.close();
await rm(folder, { recursive: true, force: true });

function finishOf(messageId: string): FinishRequest {
  const at = new Date();
  return {
    message: { message_id: messageId, execution_id: id, started_at: at, finished_at: at, attempts: 1 },
    status: 'completed',
    error: null,
    outputs: [],
  };
}
