/**
 * npm run bench:scale -- [--workload fanout|ingest] [--workers 1,2,3] [--count 4000] [--work-ms 20] [--concurrency 8]
 *
 * The scale-out setup measured: a PostgreSQL server and RabbitMQ over STOMP, one `--role api`
 * process and 1, 2, 3 `--role worker` processes (each started from src/ as `weir serve`). The
 * workload is synthetic_fanout into synthetic_sink with `work_ms` set, so that the sink's work,
 * not the broker, should bound it: one worker's ceiling is concurrency / work_ms messages a
 * second, and each further worker raises it by as much until something else is the limit.
 *
 * `--workload ingest`: the PostgreSQL documentation (postgresql-doc-15, served on loopback with a
 * generated sitemap; `--count` pages, all of them by default) through the ingestion pipeline of
 * bench:ingest (fetch, convert, segment, embed, index), the real work whose limit is CPU and
 * the database rather than a sleep.
 *
 * Where the limit moves is read from the CPU time each part spent during the run: the api and
 * worker processes from their own /metrics (weir_process_cpu_seconds_total, on
 * WEIR_METRICS_PORT), PostgreSQL's and RabbitMQ's server processes from /proc. A part whose CPU
 * seconds approach the run's wall time times the machine's cores is the bottleneck.
 *
 * BENCH_BREAK=failing-sink (fan-out: every 100th message fails for good) and
 * BENCH_BREAK=missing-page (ingest: the first page is listed in the sitemap but answers 404)
 * show the checks failing: exit 1.
 *
 * Checks (exit 1): every execution completes with every message completed, within a bounded
 * wait; every worker took a share of the messages. There is no speed-up target: on a 2-core
 * machine the curve is expected to flatten, and the report says at what.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '../test/helpers/ports.js';
import { benchBreak } from './lib/checks.js';
import { corpusPipelineYaml } from './lib/ingest-corpus.js';
import { serveDirectory } from './lib/serve-directory.js';
import { brokerCpuSeconds, postgresCpuSeconds } from './lib/server-cpu.js';
import { queryServer } from './lib/server-sql.js';

const { values } = parseArgs({
  options: {
    workload: { type: 'string', default: 'fanout' },
    workers: { type: 'string', default: '1,2,3' },
    count: { type: 'string' },
    'work-ms': { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '8' },
  },
});
const workerCounts = values.workers.split(',').map(Number);
const workload = values.workload;
if (workload !== 'fanout' && workload !== 'ingest')
  throw new Error(`--workload fanout|ingest, not ${workload}`);
const docsDirectory = '/usr/share/doc/postgresql-doc-15/html';
const count = Number(values.count ?? (workload === 'ingest' ? Number.POSITIVE_INFINITY : 4000));
const workMs = Number(values['work-ms']);
const concurrency = Number(values.concurrency);
const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const brokerUrl = process.env.BROKER_URL ?? 'stomp://guest:guest@127.0.0.1:61613';
const weir = ['--import', 'tsx', path.resolve('src/main.ts'), 'serve'];
const START_TIMEOUT_MS = 180_000;
const RUN_TIMEOUT_S = 600;

const failingSink = workload === 'fanout' && benchBreak('failing-sink');
const missingPage = workload === 'ingest' && benchBreak('missing-page');
const sinkFailures = failingSink ? ', fail_every: 100, failure: permanent' : '';
const fanoutPipeline = `
name: scale-fanout
routes:
  - id: generate
    adapters:
      - type: synthetic_fanout
        config: { count: ${count} }
        destination: sink
  - id: sink
    adapters:
      - type: synthetic_sink
        config: { work_ms: ${workMs}${sinkFailures} }${failingSink ? '\n        retry: { max_attempts: 1, backoff_ms: 0 }' : ''}
        concurrency: ${concurrency}
`;

function fail(message: string): never {
  console.error(`bench:scale FAILED: ${message}`);
  process.exit(1);
}

const administer = (statement: string) => queryServer(serverUrl, statement);

interface Process {
  name: string;
  child: ChildProcess;
  metricsPort: number;
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  fail(`${what} within ${timeoutMs / 1000} s`);
}

function start(
  name: string,
  role: 'api' | 'worker',
  environment: Record<string, string>,
  port: number,
  metricsPort: number,
): Process {
  const child = spawn(process.execPath, [...weir, '--role', role], {
    env: {
      ...process.env,
      ...environment,
      PORT: String(port),
      WEIR_METRICS_PORT: String(metricsPort),
      WEIR_LOG_LEVEL: 'warn',
      WEIR_LOG_FORMAT: 'json',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  child.once('exit', (code) => {
    if (code !== null && code !== 0 && !stopping) fail(`${name} exited with ${code}`);
  });
  return { name, child, metricsPort };
}

let stopping = false;

async function stop(processes: Process[]): Promise<void> {
  stopping = true;
  for (const { child } of processes) child.kill('SIGTERM');
  await Promise.all(
    processes.map(({ child }) =>
      child.exitCode === null ? new Promise((resolve) => child.once('exit', resolve)) : null,
    ),
  );
  stopping = false;
}

async function metricValue(port: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`))
    .reduce((total, line) => total + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

interface Workload {
  pipeline: string;
  /** What the rate counts: messages of the fan-out, or pages ingested. */
  units: number;
  unit: string;
  /** Extra environment of every process. */
  environment: Record<string, string>;
  /** Fails the bench when the run did not do all its work; `database` is the run's own. */
  verify(statistics: RunStatistics, database: string, workers: number): Promise<void>;
}

interface RunStatistics {
  completed_messages: number;
  failed_messages: number;
  total_messages: number;
}

function fanoutWorkload(): Workload {
  return {
    pipeline: fanoutPipeline,
    units: count,
    unit: 'msg',
    environment: {},
    async verify(statistics, _database, workers) {
      if (statistics.completed_messages !== count + 1)
        fail(`${statistics.completed_messages} of ${count + 1} messages completed with ${workers} worker(s)`);
    },
  };
}

async function ingestWorkload(): Promise<Workload & { close(): Promise<void> }> {
  const withheld = missingPage
    ? (await readdir(docsDirectory)).filter((name) => name.endsWith('.html')).sort()[0]
    : undefined;
  const site = await serveDirectory(docsDirectory, count, withheld);
  return {
    pipeline: corpusPipelineYaml(`${site.baseUrl}/sitemap.xml`),
    units: site.pages.length,
    unit: 'pages',
    // The corpus is served on loopback: the fetchers' egress policy must allow it.
    environment: { WEIR_FETCH_ALLOWED_CIDRS: '127.0.0.0/8' },
    async verify(statistics, database, workers) {
      if (statistics.failed_messages !== 0)
        fail(`${statistics.failed_messages} messages failed with ${workers} worker(s)`);
      const [counted] = await queryServer<{ pages: number }>(
        databaseUrl(database),
        'select count(*)::int as pages from knowledge_documents',
      );
      const pages = counted?.pages ?? 0;
      if (pages !== site.pages.length)
        fail(`${pages} of ${site.pages.length} pages indexed with ${workers} worker(s)`);
    },
    close: async () => {
      await site.close();
    },
  };
}

function databaseUrl(database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function measure(workers: number, dataDir: string, work: Workload) {
  const database = `weir_scale_${randomBytes(4).toString('hex')}`;
  await administer(`create database ${database}`);
  const environment = {
    ...work.environment,
    DATABASE_URL: databaseUrl(database),
    BROKER_URL: brokerUrl,
    WEIR_DATA_DIR: path.join(dataDir, String(workers)),
    WEIR_PIPELINES_DIR: path.join(dataDir, 'no-pipelines'),
  };
  const apiPort = await freePort();
  const api = start('api', 'api', environment, apiPort, await freePort());
  const base = `http://127.0.0.1:${apiPort}/api/v1`;
  await waitUntil(
    async () => (await fetch(`${base}/system/health`)).ok,
    START_TIMEOUT_MS,
    'the api process did not start',
  );
  const workerProcesses: Process[] = [];
  for (let index = 0; index < workers; index++)
    workerProcesses.push(
      start(`worker ${index + 1}`, 'worker', environment, await freePort(), await freePort()),
    );
  for (const worker of workerProcesses)
    await waitUntil(
      async () => (await fetch(`http://127.0.0.1:${worker.metricsPort}/metrics`)).ok,
      START_TIMEOUT_MS,
      `${worker.name} did not start`,
    );
  const processes = [api, ...workerProcesses];
  try {
    const post = (url: string, body: unknown) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const config = (await (await post(`${base}/configs`, { config_yaml: work.pipeline })).json()) as {
      id: string;
    };
    const cpuBefore = await Promise.all(
      processes.map((part) => metricValue(part.metricsPort, 'weir_process_cpu_seconds_total')),
    );
    const postgresBefore = postgresCpuSeconds().total;
    const rabbitBefore = brokerCpuSeconds();
    const started = performance.now();
    const run = await post(`${base}/configs/${config.id}/run`, {});
    if (run.status !== 201) fail(`run answered ${run.status}`);
    const { id } = (await run.json()) as { id: string };
    const waited = (await (
      await post(`${base}/executions/${id}/wait`, { timeout_seconds: RUN_TIMEOUT_S })
    ).json()) as {
      status: string;
      statistics: RunStatistics;
    };
    const seconds = (performance.now() - started) / 1000;
    if (waited.status !== 'completed') fail(`execution ended ${waited.status} with ${workers} worker(s)`);
    await work.verify(waited.statistics, database, workers);
    const cpu = await Promise.all(
      processes.map(
        async (part, index) =>
          (await metricValue(part.metricsPort, 'weir_process_cpu_seconds_total')) -
          (cpuBefore[index] as number),
      ),
    );
    const shares = await Promise.all(
      workerProcesses.map((worker) => metricValue(worker.metricsPort, 'weir_messages_total')),
    );
    shares.forEach((share, index) => {
      if (share === 0) fail(`worker ${index + 1} of ${workers} processed no message`);
    });
    return {
      workers,
      seconds,
      rate: work.units / seconds,
      apiCpu: cpu[0] as number,
      workerCpu: cpu.slice(1),
      postgresCpu: postgresCpuSeconds().total - postgresBefore,
      rabbitCpu: brokerCpuSeconds() - rabbitBefore,
      shares,
    };
  } finally {
    await stop(processes);
    await administer(`drop database if exists ${database} with (force)`);
  }
}

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'weir-scale-'));
const cores = os.availableParallelism();
const work: Workload & { close?: () => Promise<void> } =
  workload === 'ingest' ? await ingestWorkload() : fanoutWorkload();
// Only the fan-out's sink sleeps; the ingestion's ceiling is what the machine can do.
const ceiling = workload === 'fanout' ? (concurrency * 1000) / workMs : undefined;
console.log(
  workload === 'fanout'
    ? `bench:scale: fan-out of ${count} messages, work_ms ${workMs}, concurrency ${concurrency} per worker (${ceiling?.toFixed(0)} msg/s per worker if work bound), ${cores} cores, load ${os.loadavg()[0]?.toFixed(1)}`
    : `bench:scale: ingestion of ${work.units} pages of ${docsDirectory}, ${cores} cores, load ${os.loadavg()[0]?.toFixed(1)}`,
);
const results = [];
try {
  for (const workers of workerCounts) results.push(await measure(workers, dataDir, work));
} finally {
  await work.close?.();
  await rm(dataDir, { recursive: true, force: true });
}
const first = results[0];
console.log(
  `\n| workers | ${work.unit}/s | × 1 worker | ceiling if work bound | CPU s: api | CPU s: workers | CPU s: PostgreSQL | CPU s: RabbitMQ | wall s × cores |`,
);
console.log('|---|---|---|---|---|---|---|---|---|');
for (const result of results) {
  console.log(
    `| ${result.workers} | ${result.rate.toFixed(0)} | ${(result.rate / (first?.rate ?? result.rate)).toFixed(2)} | ${ceiling === undefined ? '—' : (ceiling * result.workers).toFixed(0)} | ${result.apiCpu.toFixed(1)} | ${result.workerCpu.map((value) => value.toFixed(1)).join(' + ')} | ${result.postgresCpu.toFixed(1)} | ${result.rabbitCpu.toFixed(1)} | ${(result.seconds * cores).toFixed(1)} |`,
  );
}
