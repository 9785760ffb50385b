/**
 * npm run bench:webhooks -- [count]
 * Webhook deliveries per second to a local receiver (node:http on loopback, answers 200),
 * signing on (X-Svc-Signature and Standard Webhooks on every POST): `count` storage events
 * raised on the event bus, recorded, sent 64 at a time and marked delivered, timed from the
 * first event to the last row marked delivered. One such burst warms up (V8 and PGlite's
 * WebAssembly), then BENCH_BURSTS more (default 3) on the same database are timed together:
 * the sustained rate, with whatever the growing table costs meanwhile. Baseline in the same
 * run: plain POSTs of the same bodies to the same receiver, 64 in flight on a keep-alive agent of
 * the same HTTP client (undici, through the same handler interface as the sender, with its
 * settings: no undici timers, a handler of methods on a class), without the dispatcher (no
 * database, no signing), run before and after it (the faster counts).
 * Also printed: the service thread's CPU per POST in each loop (Linux), a ratio that other
 * processes' load moves far less than the wall-time one.
 * Databases: embedded PGlite in a data dir, and the PostgreSQL server at BENCH_DATABASE_URL
 * (default postgres://postgres@127.0.0.1:5432/postgres; a fresh database per run) unless
 * BENCH_SERVER=off.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Agent } from 'undici';
import { uuidv7 } from 'uuidv7';
import { openDatabase } from '../src/db/database.js';
import { createWebhooksRepository } from '../src/db/webhooks-repository.js';
import { createEventBus, type WeirEvent } from '../src/events/event-bus.js';
import { createAddressPolicy } from '../src/webhooks/address-policy.js';
import { createDispatcher } from '../src/webhooks/dispatcher.js';
import { eventBody } from '../src/webhooks/event-body.js';
import { createSender } from '../src/webhooks/sender.js';
import { DISPATCH_CONCURRENCY } from '../src/webhooks/webhooks.js';
import { abort, benchBreak, check, finish } from './lib/checks.js';
import { queryServer } from './lib/server-sql.js';
import { printStatementTimes, timeStatements } from './lib/statement-times.js';

const count = Number(process.argv[2] ?? 10_000);
const measuredBursts = Number(process.env.BENCH_BURSTS ?? 3);
/** Bound on one burst's wait for its deliveries (BENCH_TIMEOUT_S, default 300 s). */
const timeoutMs = Number(process.env.BENCH_TIMEOUT_S ?? 300) * 1000;
/** BENCH_BREAK=lost-message: one event of the first burst is never emitted, so a delivery is missing. */
const loseOne = benchBreak('lost-message');
const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

interface Receiver {
  url: string;
  received: () => number;
  /** Deliveries whose id (X-Svc-Delivery) arrived before: sent twice. */
  duplicates: () => number;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  let received = 0;
  // Duplicates are told by delivery id, not by count: a lost delivery and a duplicate would
  // otherwise cancel out. (The baseline's plain POSTs carry no id.)
  const seen = new Set<string>();
  let duplicates = 0;
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received++;
      const id = request.headers['x-svc-delivery'];
      if (typeof id === 'string') {
        if (seen.has(id)) duplicates++;
        seen.add(id);
      }
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received: () => received,
    duplicates: () => duplicates,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function storageEvent(executionId: string, index: number): WeirEvent {
  return {
    type: 'storage.object_created',
    execution_id: executionId,
    config_id: 'bench',
    route_id: 'bench',
    adapter_name: 'bench_writer',
    key: `${executionId}/bench_writer/item-${index}.json`,
    size: 128,
    content_type: 'application/json',
    timestamp: new Date().toISOString(),
  };
}

/** One plain POST's handler (undici 7's handler interface): resolves on a 200. */
class PlainExchange {
  private status = 0;
  constructor(
    private readonly resolve: () => void,
    private readonly reject: (error: Error) => void,
  ) {}
  onRequestStart(): void {}
  onResponseStart(_controller: unknown, statusCode: number): void {
    this.status = statusCode;
  }
  onResponseData(): void {}
  onResponseEnd(): void {
    if (this.status === 200) this.resolve();
    else this.reject(new Error('not 200'));
  }
  onResponseError(_controller: unknown, error: Error): void {
    this.reject(error);
  }
}

async function baseline(receiver: Receiver): Promise<{ seconds: number; cpu: number | undefined }> {
  const executionId = uuidv7();
  const bodies = Array.from({ length: count }, (_, index) =>
    JSON.stringify(eventBody(storageEvent(executionId, index), uuidv7())),
  );
  // The client the dispatcher's sender uses (undici), through the same handler interface
  // (agent.dispatch), with the same settings (no undici timers: the sender keeps its own
  // deadline) and a handler of the same shape (methods on a class, as src/http/outbound.ts's
  // LeanExchange), so the two differ by the dispatcher only.
  const agent = new Agent({ connections: DISPATCH_CONCURRENCY });
  const { origin, pathname } = new URL(receiver.url);
  const headers = { 'content-type': 'application/json' };
  const post = (body: string) =>
    new Promise<void>((resolve, reject) => {
      agent.dispatch(
        { origin, path: pathname, method: 'POST', headers, body, headersTimeout: 0, bodyTimeout: 0 },
        new PlainExchange(resolve, reject),
      );
    });
  let next = 0;
  const cpuStart = mainThreadCpu();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: DISPATCH_CONCURRENCY }, async () => {
      while (next < count) await post(bodies[next++] as string);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuSince(cpuStart);
  await agent.destroy();
  return { seconds, cpu };
}

async function dispatcherRun(receiver: Receiver, databaseUrl: string | undefined, dataDir: string) {
  const database = await openDatabase(databaseUrl ? { url: databaseUrl } : { dataDir, timeStatements });
  const repository = createWebhooksRepository(database.db);
  const { webhook_id: webhookId } = await repository.createSubscription({
    webhook_id: uuidv7(),
    url: receiver.url,
    secret: 'bench-secret-0123456789abcdef',
    event_types: ['storage.object_created'],
    filters: {},
    enabled: true,
    now: new Date(),
  });
  const events = createEventBus();
  const dispatcher = createDispatcher({
    repository,
    sender: createSender({
      policy: createAddressPolicy(['127.0.0.0/8']),
      timeoutMs: 10_000,
      maxSockets: DISPATCH_CONCURRENCY,
    }),
    events,
    concurrency: DISPATCH_CONCURRENCY,
    onError: (error, message) => console.error(message, error),
  });
  dispatcher.start();
  // A warm-up burst, then the measured ones, on the same database. The warm-up pays for what a
  // running service has behind it: V8 compiling the hot paths and PGlite's WebAssembly tiering
  // up. (Per-thread CPU showed the tiering still going on in the second burst: V8's helper
  // threads and the PGlite thread used a fifth less from the third burst on.) The measured
  // bursts count together, so an ANALYZE of the growing table in one of them is paid, not
  // dodged by taking the fastest.
  const times: number[] = [];
  let cpuStart: number | undefined;
  for (let burst = 1; burst <= 1 + measuredBursts; burst++) {
    if (burst === 2) cpuStart = mainThreadCpu();
    const before = receiver.received();
    const executionId = uuidv7();
    const started = performance.now();
    const emitted = loseOne && burst === 1 ? count - 1 : count;
    for (let index = 0; index < emitted; index++) events.emit(storageEvent(executionId, index));
    const deadline = Date.now() + timeoutMs;
    while (receiver.received() - before < count) {
      if (Date.now() > deadline)
        abort(
          `burst ${burst}: ${receiver.received() - before} of ${count} deliveries arrived within ${timeoutMs / 1000} s`,
        );
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    // Done when every row is marked delivered, not only when the POSTs arrived. Looked at every
    // 5 ms with a cheap question (is any journal row left, i.e. any delivery without its row? A
    // journal row goes in the statement that writes the last of its deliveries' rows), and the
    // clock stops there; the delivered rows are counted after it, and the look goes on if the
    // count falls short. The count reads every row of the table, all bursts' (7-29 ms on PGlite
    // by the fourth burst, 40-140 ms under load): the bench's own check, not the dispatcher's
    // work, and once inside the window it was 3-5 % of a burst's time.
    let ended: number;
    for (;;) {
      const journalled = await database.db
        .selectFrom('webhook_delivery_journal')
        .select('batch_id')
        .limit(1)
        .execute();
      if (journalled.length === 0) {
        ended = performance.now();
        const { total } = await repository.listDeliveries(webhookId, {
          status: 'delivered',
          limit: 1,
          offset: 0,
        });
        if (total === count * burst) break;
      }
      if (Date.now() > deadline)
        abort(`burst ${burst}: the deliveries were not all marked delivered in time`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    times.push((ended - started) / 1000);
    check(receiver.duplicates() === 0, `burst ${burst}: ${receiver.duplicates()} deliveries arrived twice`);
    check(
      receiver.received() - before === count,
      `burst ${burst}: ${receiver.received() - before} POSTs for ${count} deliveries`,
    );
  }
  const cpu = cpuSince(cpuStart);
  await dispatcher.stop();
  await printStatementTimes(database);
  await database.close();
  const measured = times.slice(1);
  return {
    seconds: measured.reduce((sum, time) => sum + time, 0),
    warmUp: times[0] as number,
    measured,
    cpu,
  };
}

const administer = (statement: string) => queryServer(serverUrl, statement);

/**
 * CPU seconds of this process's main thread (the service thread, which also runs the
 * receiver), from /proc (Linux; undefined elsewhere). The service thread is the limit of both
 * loops, so its CPU per POST is a figure other processes' load moves far less than wall time.
 */
function mainThreadCpu(): number | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}
const cpuSince = (start: number | undefined) => {
  const end = mainThreadCpu();
  return start === undefined || end === undefined ? undefined : end - start;
};

console.log(
  `machine: ${os.cpus()[0]?.model} x${os.cpus().length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`,
);
const setups: Array<[name: string, useServer: boolean]> = [['PGlite (data dir)', false]];
if (process.env.BENCH_SERVER !== 'off') setups.push(['PostgreSQL server', true]);
for (const [name, useServer] of setups) {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'weir-bench-webhooks-'));
  const receiver = await startReceiver();
  let databaseUrl: string | undefined;
  if (useServer) {
    const database = `weir_bench_webhooks_${Date.now()}`;
    await administer(`create database ${database}`);
    const url = new URL(serverUrl);
    url.pathname = `/${database}`;
    databaseUrl = url.toString();
  }
  // The baseline runs before and after the dispatcher and its faster run counts, so neither
  // side gains from the other warming up the HTTP paths (and the ratio errs against the
  // dispatcher).
  const firstBaseline = await baseline(receiver);
  const dispatched = await dispatcherRun(receiver, databaseUrl, path.join(folder, 'data'));
  const secondBaseline = await baseline(receiver);
  const baselineSeconds = Math.min(firstBaseline.seconds, secondBaseline.seconds);
  // The cheaper of the two in CPU too (the ratio errs against the dispatcher).
  const baselineCpu = Math.min(firstBaseline.cpu ?? Number.NaN, secondBaseline.cpu ?? Number.NaN);
  await receiver.close();
  if (databaseUrl)
    await administer(`drop database if exists ${new URL(databaseUrl).pathname.slice(1)} with (force)`);
  await rm(folder, { recursive: true, force: true });
  const baselineRate = count / baselineSeconds;
  const dispatchRate = (count * measuredBursts) / dispatched.seconds;
  const bursts = dispatched.measured.map((seconds) => seconds.toFixed(2)).join(' + ');
  console.log(`${name}, bursts of ${count} deliveries, ${DISPATCH_CONCURRENCY} in flight`);
  console.log(
    `  baseline plain POSTs:         ${baselineSeconds.toFixed(2)} s, ${Math.round(baselineRate)} POSTs/s`,
  );
  console.log(
    `  dispatcher (signed, durable): warm-up ${dispatched.warmUp.toFixed(2)} s, then ${bursts} s, ${Math.round(dispatchRate)} deliveries/s`,
  );
  console.log(`  dispatcher / baseline:        ${(dispatchRate / baselineRate).toFixed(3)}`);
  if (dispatched.cpu !== undefined && Number.isFinite(baselineCpu)) {
    const perPost = (baselineCpu * 1e6) / count;
    const perDelivery = (dispatched.cpu * 1e6) / (count * measuredBursts);
    console.log(
      `  service-thread CPU:           baseline ${perPost.toFixed(1)} us/POST, dispatcher ${perDelivery.toFixed(1)} us/delivery, ratio ${(perPost / perDelivery).toFixed(3)}`,
    );
  }
}
finish();
