/**
 * npm run bench:fan-in -- [--count 10000] [--callers 16] [--packages 1]
 *
 * The execution fan-in alone (src/db/fan-in-repository.ts), as conv_filtered_collector drives
 * it: `--callers` concurrent callers (the stage's concurrency in bench:conversations) record
 * `--count` arrivals spread over `--packages` groups. Two runs on fresh executions of the same
 * database: the baseline with each arrival its own statement, the callers' statements running
 * at once on the pool and queueing on the group's counter row for a commit each (the fan-in
 * before group commit), run before and after the group-committed run as the service runs it
 * (the faster baseline counts). Reports arrivals/s of each and the ratio. On embedded PGlite in a temporary data dir, or on the
 * PostgreSQL server at BENCH_DATABASE_URL (an empty database).
 *
 * Exit 1 when a group did not complete exactly once with every one of its arrivals.
 * BENCH_BREAK=lost-arrival: the first arrival is never recorded, so its package cannot complete.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/db/database.js';
import { createExecutionFanIn, recordArrivals } from '../src/db/fan-in-repository.js';
import type { ExecutionFanIn } from '../src/ports/execution-state.js';
import { insertConfig, insertExecution } from '../test/helpers/execution-rows.js';
import { benchBreak, check, finish } from './lib/checks.js';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '10000' },
    callers: { type: 'string', default: '16' },
    packages: { type: 'string', default: '1' },
  },
});
const count = Number(values.count);
const callers = Number(values.callers);
const packages = Number(values.packages);
const loseArrival = benchBreak('lost-arrival');

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'weir-bench-fan-in-'));
const serverUrl = process.env.BENCH_DATABASE_URL;
const database = await openDatabase(serverUrl ? { url: serverUrl } : { dataDir });
try {
  const configId = await insertConfig(database.db);
  console.log(
    `## ${count} arrivals, ${callers} callers, ${packages} package(s), ${serverUrl ? 'PostgreSQL server' : 'embedded PGlite'}`,
  );
  // The baseline runs before and after (each on a fresh execution), the faster counting: the
  // first run also warms the process and the database, which favoured the run after it.
  const oneByOne = async () => {
    const executionId = await insertExecution(database.db, configId);
    return measure({
      arrive: async (group, item, value, total) =>
        (await recordArrivals(database.db, [{ executionId, group, item, value, total }]))[0],
    });
  };
  const before = await oneByOne();
  const batched = await measure(
    createExecutionFanIn(database.db).forExecution(await insertExecution(database.db, configId)),
  );
  const after = await oneByOne();
  const single = before.per_second >= after.per_second ? before : after;
  console.table([
    { run: 'one arrival per statement, before (baseline)', ...before },
    { run: 'group-committed', ...batched },
    { run: 'one arrival per statement, after (baseline)', ...after },
  ]);
  console.log(`group-committed / baseline: ${(batched.per_second / single.per_second).toFixed(2)}x`);
} finally {
  await database.close();
  await rm(dataDir, { recursive: true, force: true });
}
finish();

async function measure(fanIn: ExecutionFanIn) {
  const perPackage = Math.ceil(count / packages);
  const completed = new Map<string, number>();
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (next < count) {
        const index = next++;
        if (loseArrival && index === 0) continue;
        const group = `package-${index % packages}`;
        const total = Math.min(perPackage, Math.ceil((count - (index % packages)) / packages));
        const arrivals = await fanIn.arrive(group, `item-${index}`, { index }, total);
        if (arrivals) {
          check(!completed.has(group), `${group} completed twice`);
          completed.set(group, arrivals.length);
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  check(completed.size === packages, `${completed.size} of ${packages} packages completed`);
  const recorded = [...completed.values()].reduce((sum, arrivals) => sum + arrivals, 0);
  check(recorded === count, `the completions held ${recorded} of ${count} arrivals`);
  return { seconds: Math.round(seconds * 100) / 100, per_second: Math.round(count / seconds) };
}
