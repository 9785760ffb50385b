/**
 * npm run bench:startup -- [queries=50]
 *
 * Start-up, first queries and idle memory of the built service (`node dist/main.js serve` with
 * the environment `npm start` adds, run `npm run build` first) on the embedded defaults, in a fresh data dir with the example
 * pipelines (weir-docs indexes README.md and docs/*.md at start). It prints:
 * - a start-up timeline: when each log line came, and when health first answered 200, for a
 *   first start (initdb) and a second start on the same data dir (what `npm start` does on a
 *   machine that ran it before); for the second, when readiness first answered 200 (the
 *   service listens before it loads the pipeline files);
 * - the first `queries` concurrent keyword searches, fired as soon as health answers on the
 *   second start: how many answered 200 and how long the slowest took;
 * - the RSS once idle (`BENCH_IDLE_S`, default 20 s after the example runs end): VmRSS,
 *   RssAnon, RssFile and the peak VmHWM from /proc/<pid>/status.
 *
 * Memory figures do not depend on the machine's load; the times do, so the load is printed.
 * It exits 1 when a query does not answer 200 or health never answers. `BENCH_BREAK=stopped`
 * stops the service just before the queries, so none answers (docs/bench-checks.md).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../test/helpers/ports.js';
import { benchBreak } from './lib/checks.js';

const args = process.argv.slice(2);
const QUERIES = Number(args.find((arg) => /^\d+$/.test(arg)) ?? 50);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_S ?? 20);
const breakService = benchBreak('stopped');
/** jemalloc, as `npm start` finds it (package.json); '' when the machine has none. */
const jemalloc =
  ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu']
    .map((directory) => path.join(directory, 'libjemalloc.so.2'))
    .find((file) => existsSync(file)) ?? '';
/** BENCH_PORT: a port of the caller's own range (helpers benching side by side); a free one otherwise. */
const port = process.env.BENCH_PORT ? Number(process.env.BENCH_PORT) : await freePort();
const base = `http://127.0.0.1:${port}`;

interface Started {
  child: ChildProcess;
  spawnedAt: number;
  healthyAt: number;
  timeline: { at: number; msg: string }[];
}

async function start(dataDir: string): Promise<Started> {
  const spawnedAt = Date.now();
  const child = spawn(process.execPath, ['dist/main.js', 'serve'], {
    env: {
      ...process.env,
      // What `npm start` sets (package.json): two glibc malloc arenas instead of one per thread,
      // and jemalloc where the machine has it (LD_PRELOAD= in the environment: glibc's malloc).
      MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
      LD_PRELOAD: process.env.LD_PRELOAD ?? jemalloc,
      MALLOC_CONF: process.env.MALLOC_CONF ?? 'background_thread:true',
      DATABASE_URL: '',
      WEIR_DATA_DIR: dataDir,
      PORT: String(port),
      WEIR_LOG_FORMAT: 'json',
      WEIR_LOG_LEVEL: 'info',
      // A temporary directory of its own: nothing another process converted or cached there
      // (word vectors, say) makes this start look faster than a fresh machine's.
      TMPDIR: path.join(dataDir, 'tmp'),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const timeline: { at: number; msg: string }[] = [];
  let partial = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      try {
        const entry = JSON.parse(line) as {
          time?: number;
          msg?: string;
          rssMb?: number[];
          heapMb?: number[];
        };
        // A recycle's figures (RSS before and after, PGlite's memory), or an idle collection's
        // (V8's heap before and after), go with its line.
        const figures =
          entry.rssMb || entry.heapMb
            ? ` ${JSON.stringify({ ...entry, time: undefined, msg: undefined, level: undefined, pid: undefined, hostname: undefined })}`
            : '';
        if (entry.msg) timeline.push({ at: entry.time ?? Date.now(), msg: entry.msg.slice(0, 90) + figures });
      } catch {
        timeline.push({ at: Date.now(), msg: line.slice(0, 90) });
      }
    }
  });
  for (;;) {
    if (child.exitCode !== null) throw new Error(`weir serve exited with code ${child.exitCode}`);
    if (Date.now() - spawnedAt > 120_000) throw new Error('health did not answer within 120 s');
    const health = await fetch(`${base}/api/v1/system/health`).catch(() => undefined);
    if (health?.ok) return { child, spawnedAt, healthyAt: Date.now(), timeline };
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The embedded database thread recycles (src/db/pglite-recycle.ts) and idle heap collections (src/runtime/idle-collection.ts) logged so far. */
function printRecycles(started: Started): void {
  for (const { at, msg } of started.timeline.filter((entry) =>
    /thread (reopened|recycle)|heap collected/.test(entry.msg),
  )) {
    console.log(`  ${((at - started.spawnedAt) / 1000).toFixed(3).padStart(7)} s  ${msg}`);
  }
}

function printTimeline(label: string, started: Started): void {
  console.log(
    `\n${label}: healthy ${((started.healthyAt - started.spawnedAt) / 1000).toFixed(2)} s after spawn`,
  );
  for (const { at, msg } of started.timeline.filter((entry) => entry.at <= started.healthyAt + 50)) {
    console.log(`  ${((at - started.spawnedAt) / 1000).toFixed(3).padStart(7)} s  ${msg}`);
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

async function memoryOf(pid: number): Promise<Record<string, number>> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const fields: Record<string, number> = {};
  for (const name of ['VmRSS', 'RssAnon', 'RssFile', 'VmHWM']) {
    const match = status.match(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm'));
    if (match) fields[name] = Math.round(Number(match[1]) / 1024);
  }
  return fields;
}

/** Waits until no execution is running (the example pipelines that run at start). */
async function untilExecutionsEnd(): Promise<void> {
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    const response = await fetch(`${base}/api/v1/executions?limit=100`);
    const body = (await response.json()) as { executions: { status: string }[] };
    if (body.executions.length > 0 && body.executions.every((item) => item.status !== 'running')) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** When readiness first answers 200: `weir serve` loads the pipeline files after it listens. */
async function untilReady(): Promise<number> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const ready = await fetch(`${base}/api/v1/system/ready`).catch(() => undefined);
    if (ready?.ok) return Date.now();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('readiness did not answer 200 within 120 s');
}

async function firstQueries(): Promise<{ ok: number; slowestMs: number }> {
  const startedAt = Date.now();
  const answers = await Promise.all(
    Array.from({ length: QUERIES }, (_, index) =>
      fetch(`${base}/api/v1/chat/search/keyword`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: `how do I run the service on a postgres server ${index}` }),
        signal: AbortSignal.timeout(120_000),
      })
        .then((response) => ({ status: response.status, at: Date.now() }))
        .catch(() => ({ status: 0, at: Date.now() })),
    ),
  );
  return {
    ok: answers.filter((answer) => answer.status === 200).length,
    slowestMs: Math.max(...answers.map((answer) => answer.at - startedAt)),
  };
}

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'weir-bench-startup-'));
await mkdir(path.join(dataDir, 'tmp'));
let failed = false;
try {
  console.log(
    `load average at start: ${os
      .loadavg()
      .map((load) => load.toFixed(2))
      .join(' ')}`,
  );
  const first = await start(dataDir);
  printTimeline('first start (fresh data dir)', first);
  await untilExecutionsEnd();
  await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
  console.log(
    `idle ${IDLE_SECONDS} s after the example runs, MB: ${JSON.stringify(await memoryOf(first.child.pid as number))}`,
  );
  printRecycles(first);
  await stop(first.child);

  const second = await start(dataDir);
  printTimeline('second start (same data dir)', second);
  if (breakService) await stop(second.child);
  const [queries, readyAt] = await Promise.all([firstQueries(), breakService ? undefined : untilReady()]);
  if (readyAt !== undefined) {
    console.log(
      `ready (GET /system/ready 200, the pipeline files loaded) ${((readyAt - second.spawnedAt) / 1000).toFixed(2)} s after spawn`,
    );
  }
  console.log(
    `\n${QUERIES} concurrent keyword searches at health: ${queries.ok} answered 200, the slowest in ${queries.slowestMs} ms`,
  );
  if (queries.ok !== QUERIES) failed = true;
  if (!breakService) {
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    const memory = await memoryOf(second.child.pid as number);
    console.log(`idle ${IDLE_SECONDS} s after the queries, MB: ${JSON.stringify(memory)}`);
    printRecycles(second);
    await stop(second.child);
  }
  console.log(
    `load average at end: ${os
      .loadavg()
      .map((load) => load.toFixed(2))
      .join(' ')}`,
  );
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
