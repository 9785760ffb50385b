/**
 * npm run bench:engine -- [count]
 * synthetic_fanout (count) into synthetic_sink (work_ms 0), end to end with lineage on, on the
 * embedded defaults (PGlite in a data dir, filesystem store) with the in-process broker; beside
 * a baseline measured in the same run: the raw round trip of the same number of envelopes
 * (encode, publish, consume, decode, ack) through the same broker without the engine, before
 * and after the engine (the faster counts).
 * WEIR_PGLITE_SETTINGS (name=value, comma-separated) sets the embedded Postgres as it does the service's.
 * BENCH_MEMORY=off, BENCH_SERVER=off and BENCH_STOMP=off skip setups; the broker's CPU (BENCH_BROKER_PID,
 * else every local beam.smp: RabbitMQ) is added to each loop's figures (bench/lib/server-cpu.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { uuidv7 } from 'uuidv7';
import { createBuiltinRegistry } from '../src/adapters/builtin.js';
import type { Broker } from '../src/broker/broker.js';
import { createMemoryBroker } from '../src/broker/memory.js';
import { connectStompBroker } from '../src/broker/stomp/stomp-broker.js';
import { openDatabase } from '../src/db/database.js';
import { createEngine } from '../src/engine/create-engine.js';
import { decodeEnvelope, encodeEnvelope } from '../src/engine/envelope.js';
import { createEventBus } from '../src/events/event-bus.js';
import { createFilesystemObjectStore } from '../src/storage/fs.js';
import type { ObjectStore } from '../src/storage/object-store.js';
import { abort, benchBreak, bounded } from './lib/checks.js';
import { benchPgliteSettings } from './lib/pglite-settings.js';
import { brokerCpuSeconds } from './lib/server-cpu.js';
import { queryServer } from './lib/server-sql.js';
import { busiestThreads, cpuNow, printStatementTimes, timeStatements } from './lib/statement-times.js';

const count = Number(process.argv[2] ?? 100_000);

async function rawRoundTrip(broker: Broker, storage: ObjectStore): Promise<number> {
  const executionId = uuidv7();
  let received = 0;
  const started = performance.now();
  const done = new Promise<void>((resolve) => {
    broker
      .subscribe(`bench.raw.${executionId}`, { prefetch: 256 }, async (message) => {
        await decodeEnvelope(message.body, storage);
        await message.ack();
        if (++received === count) resolve();
      })
      .catch((error: unknown) => abort(`cannot subscribe: ${(error as Error).message}`));
  });
  // Sends pipelined 256 at a time, as the engine does, so both sides use the broker alike.
  let next = 0;
  const sender = async () => {
    while (next < count) {
      const index = next++;
      const bytes = await encodeEnvelope(
        {
          message_id: uuidv7(),
          correlation_id: '',
          execution_id: executionId,
          route_id: 'sink',
          stage: 'synthetic_fanout',
          timestamp: new Date().toISOString(),
          payload: { index, total: count, padding: '' },
          metadata: {},
        },
        storage,
      );
      await broker.publish(`bench.raw.${executionId}`, bytes);
    }
  };
  await Promise.all(Array.from({ length: 256 }, sender));
  await bounded(done, timeoutMs, `the raw round trip received ${received} of ${count} messages`);
  return (performance.now() - started) / 1000;
}

async function engineRun(
  dataDir: string,
  broker: Broker,
  storage: ObjectStore,
  databaseUrl: string | undefined,
): Promise<{ seconds: number; cpu: { process: number; mainThread: number } }> {
  const database = await openDatabase(
    databaseUrl
      ? { url: databaseUrl }
      : {
          dataDir,
          pgliteThread: process.env.BENCH_PGLITE_THREAD === 'main' ? 'main' : 'worker',
          pgliteSettings: benchPgliteSettings,
          timeStatements,
        },
  );
  const registry = createBuiltinRegistry();
  const events = createEventBus();
  const now = () => new Date();
  const {
    configs,
    executions: repository,
    orchestrator,
  } = createEngine({
    database,
    registry,
    broker,
    storage,
    events,
    now,
    newId: uuidv7,
    logger: { info: () => {}, warn: () => {}, error: (object, message) => console.error(message, object) },
  });
  await orchestrator.start();
  const config = await configs.create({
    config_yaml: `routes:
  - id: generate
    adapters:
      - type: synthetic_fanout
        config: { count: ${count} }
        destination: sink
  - id: sink
    adapters:
      - type: synthetic_sink
        config: { work_ms: 0${breakRun ? ', fail_every: 1, failure: permanent' : ''} }
        concurrency: ${sinkConcurrency}
`,
  });
  // Completed or failed: a failed run ends the wait too (and the bench).
  let ended: (status: string) => void = () => {};
  const finished = new Promise<string>((resolve) => {
    ended = resolve;
  });
  let executionId: string | undefined;
  events.subscribe((event) => {
    const end = event.type === 'execution.completed' || event.type === 'execution.failed';
    if (end && 'execution_id' in event && event.execution_id === executionId) ended(event.type);
  });
  const started = performance.now();
  const cpuStarted = cpuNow();
  const execution = await orchestrator.run(config.id);
  executionId = execution.id;
  // It may have ended before the id was known (a tiny count): read the row too.
  const row = await repository.findExecution(execution.id);
  if (row && row.status !== 'running') ended(`execution.${row.status}`);
  const outcome = await bounded(finished, timeoutMs, `the execution of ${count} messages did not end`);
  if (outcome !== 'execution.completed') abort(`the execution ended with ${outcome}`);
  const seconds = (performance.now() - started) / 1000;
  const cpuEnded = cpuNow();
  const cpu = {
    process: (cpuEnded.process - cpuStarted.process) / 1000,
    mainThread: (cpuEnded.mainThread - cpuStarted.mainThread) / 1000,
  };
  if (timeStatements) console.log(`  busiest threads (CPU s): ${busiestThreads(cpuStarted, cpuEnded)}`);
  const statistics = await repository.statistics(execution.id);
  if (statistics.completed_messages !== count + 1 || statistics.failed_messages !== 0)
    abort(`messages lost or failed: ${JSON.stringify(statistics)}`);
  await orchestrator.stop();
  await printStatementTimes(database);
  await database.close();
  return { seconds, cpu };
}

const sinkConcurrency = Number(process.env.BENCH_CONCURRENCY ?? 256);
/** Bound on one engine run (BENCH_TIMEOUT_S, default 600 s). */
const timeoutMs = Number(process.env.BENCH_TIMEOUT_S ?? 600) * 1000;
/** BENCH_BREAK=failed-run: every sink message fails, so the execution does not complete. */
const breakRun = benchBreak('failed-run');
const stompUrl = process.env.BENCH_STOMP_URL ?? 'stomp://guest:guest@127.0.0.1:61613';
/** The scale-out deployment: a PostgreSQL server beside the STOMP broker (a fresh database per run). */
const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
type Setup = [name: string, open: () => Promise<Broker>, useServer: boolean];
const openMemory = async () => createMemoryBroker();
const setups: Setup[] = [];
if (process.env.BENCH_MEMORY !== 'off') {
  setups.push(['in-process broker, PGlite', openMemory, false]);
  // A single instance with a database server: the in-process broker beside PostgreSQL.
  if (process.env.BENCH_SERVER !== 'off')
    setups.push(['in-process broker, PostgreSQL server', openMemory, true]);
}
if (process.env.BENCH_STOMP !== 'off') {
  const openStomp = () => connectStompBroker(stompUrl);
  setups.push([`STOMP ${new URL(stompUrl).host}, PGlite`, openStomp, false]);
  if (process.env.BENCH_SERVER !== 'off')
    setups.push([`STOMP ${new URL(stompUrl).host}, PostgreSQL server`, openStomp, true]);
}

/** CPU seconds the local broker has used (BENCH_BROKER_PID, else every beam.smp), or undefined. */
function brokerCpu(): number | undefined {
  const seconds = brokerCpuSeconds();
  return Number.isNaN(seconds) ? undefined : seconds;
}
const cpuSince = (start: number | undefined) => {
  const end = brokerCpu();
  return start === undefined || end === undefined ? '' : `, the broker ${(end - start).toFixed(2)} s`;
};

const administer = (statement: string) => queryServer(serverUrl, statement);

async function freshServerDatabase(): Promise<string> {
  const name = `weir_bench_${Date.now()}`;
  await administer(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

const rate = (seconds: number) => Math.round(count / seconds);

/** One raw round trip on a broker of its own, with its CPU (the process's, and the broker's). */
async function timedRawLoop(
  open: () => Promise<Broker>,
  storage: ObjectStore,
): Promise<{ seconds: number; cpuText: string }> {
  const broker = await open();
  const [cpu, brokerStart] = [process.cpuUsage(), brokerCpu()];
  const seconds = await rawRoundTrip(broker, storage);
  const usage = process.cpuUsage(cpu);
  const cpuText = `${((usage.user + usage.system) / 1e6).toFixed(2)} s in the process${cpuSince(brokerStart)}`;
  await broker.close();
  return { seconds, cpuText };
}
console.log(
  `machine: ${os.cpus()[0]?.model} x${os.cpus().length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`,
);
for (const [name, open, useServer] of setups) {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'weir-bench-engine-'));
  const storage = createFilesystemObjectStore(path.join(folder, 'objects'));
  const before = await timedRawLoop(open, storage);
  const engineBroker = await open();
  const engineBrokerCpu = brokerCpu();
  const databaseUrl = useServer ? await freshServerDatabase() : undefined;
  const { seconds: engineSeconds, cpu } = await engineRun(
    path.join(folder, 'data'),
    engineBroker,
    storage,
    databaseUrl,
  );
  const engineBrokerText = cpuSince(engineBrokerCpu);
  await engineBroker.close();
  if (databaseUrl)
    await administer(`drop database if exists ${new URL(databaseUrl).pathname.slice(1)} with (force)`);
  const after = await timedRawLoop(open, storage);
  await rm(folder, { recursive: true, force: true });
  // The faster loop counts: one loop swung 0.8-1.6 s on a quiet host, and moved the ratio
  // more than any change to the engine did (bench:ingest and bench:webhooks do the same).
  const { seconds: rawSeconds, cpuText: rawCpuText } = before.seconds <= after.seconds ? before : after;
  console.log(`${name}, ${count} messages`);
  console.log(
    `  baseline raw round trip: ${rawSeconds.toFixed(2)} s, ${rate(rawSeconds)} messages/s (the faster of ${before.seconds.toFixed(2)} s before and ${after.seconds.toFixed(2)} s after)`,
  );
  console.log(`  baseline CPU:            ${rawCpuText}`);
  console.log(`  engine with lineage:     ${engineSeconds.toFixed(2)} s, ${rate(engineSeconds)} messages/s`);
  console.log(`  engine / baseline:       ${(rawSeconds / engineSeconds).toFixed(3)}`);
  // CPU seconds of the engine run: the process (every thread, PGlite's included) and the
  // main thread alone; on a shared machine they compare runs better than wall time.
  console.log(
    `  engine CPU:              ${cpu.process.toFixed(2)} s in the process, ${cpu.mainThread.toFixed(2)} s on the main thread${engineBrokerText}`,
  );
}
