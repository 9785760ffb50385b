/**
 * The worker side of pglite-thread.ts: owns one PGlite instance (with pgvector) and runs the
 * statements the service thread sends, one at a time, in the order they arrive.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { setFlagsFromString } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { idleCollectionGrowthBytes, startIdleCollection } from '../runtime/idle-collection.js';
import type { PgliteWorkerData, ThreadReply, ThreadRequest } from './pglite-thread.js';

const port = parentPort;
if (!port) throw new Error('pglite-worker.ts runs as a worker thread only');

const { dataDir, timeStatements, startParams, openOnSignal, idleCollectMs } = workerData as PgliteWorkerData;
/** Count and milliseconds per statement text, when timing was asked for (benchmarks). */
const times = timeStatements
  ? new Map<string, { count: number; milliseconds: number; cpuMilliseconds: number }>()
  : undefined;

/**
 * This thread's CPU time in milliseconds (Linux: the first field of schedstat, nanoseconds on a
 * core), or 0 where it cannot be read. Timed statements report it beside wall time, which on a
 * shared machine includes the waits for a core.
 */
function threadCpuMilliseconds(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return 0;
  }
}

/** The fields a caller inspects (code, detail, constraint...) survive the trip between threads. */
function describeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) };
  const fields: Record<string, unknown> = { name: error.name, message: error.message };
  for (const [key, value] of Object.entries(error)) {
    if (value === undefined || typeof value === 'function' || typeof value === 'object') continue;
    fields[key] = value;
  }
  return fields;
}

// V8 recompiles a WebAssembly function with its optimizing compiler once the function has run
// through a budget (about 1.8 MB of its code executed). Postgres's start and first statements
// cross it for its largest functions (the parser's and planner's, up to 100 KB of code each),
// and those compilations cost about 0.25 s of CPU on the two cores the open, the imports of the
// service thread and the first queries share (issue 35). At ten times the budget they are left
// to the baseline compiler during the start; functions hot in service still cross it within
// milliseconds (2,000 statements after the open took the same CPU either way).
setFlagsFromString('--wasm-tiering-budget=18000000');
try {
  // Started before the data dir's lock is taken: PGlite's WebAssembly compiles meanwhile, and
  // its files are opened only once the service thread says the lock is held.
  const opened = openOnSignal ? new Promise((resolve) => port.once('message', resolve)) : undefined;
  const pgliteWasmModule = openOnSignal ? await compilePgliteWasm() : undefined;
  await opened;
  const pglite = await PGlite.create(dataDir, {
    extensions: { vector },
    ...(startParams ? { startParams } : {}),
    ...(pgliteWasmModule ? { pgliteWasmModule } : {}),
  });
  port.on('message', async (request: ThreadRequest) => {
    let reply: ThreadReply;
    try {
      if (request.kind === 'statement-times') {
        const rows = [...(times ?? [])].map(([statement, time]) => ({ statement, ...time }));
        reply = { id: request.id, rows: rows.sort((a, b) => b.milliseconds - a.milliseconds) };
      } else if (request.kind === 'memory') {
        reply = { id: request.id, rows: [{ bytes: pglite.Module.wasmMemory.buffer.byteLength }] };
      } else if (request.kind === 'close') {
        if (!pglite.closed) await pglite.close();
        reply = { id: request.id, rows: [] };
      } else {
        const started = times ? performance.now() : 0;
        const cpuStarted = times ? threadCpuMilliseconds() : 0;
        const result = await pglite.query(request.sql, request.params);
        if (times) {
          const statement = request.sql.replace(/\s+/g, ' ').trim().slice(0, 80);
          const time = times.get(statement) ?? { count: 0, milliseconds: 0, cpuMilliseconds: 0 };
          time.count++;
          time.milliseconds += performance.now() - started;
          time.cpuMilliseconds += threadCpuMilliseconds() - cpuStarted;
          times.set(statement, time);
        }
        reply = { id: request.id, rows: result.rows, affectedRows: result.affectedRows };
      }
    } catch (error) {
      reply = { id: request.id, error: describeError(error) };
    }
    port.postMessage({ ...reply, inTransaction: !pglite.closed && pglite.isInTransaction() });
  });
  // This thread's V8 heap is its own (PGlite's JavaScript, the rows of every result on their
  // way out): after the first 50 searches it held 90 MB, 60-70 of it used, and grew while
  // idle. Collected as the main thread's is, when this thread's loop goes quiet (issue 35).
  startIdleCollection({ windowMs: idleCollectMs, minGrowthBytes: idleCollectionGrowthBytes });
  port.postMessage({ id: 0, rows: [] } satisfies ThreadReply);
} catch (error) {
  port.postMessage({ id: 0, error: describeError(error) } satisfies ThreadReply);
}

/** Node's WebAssembly, which the service's TypeScript libraries (ES2023, node) do not declare. */
declare const WebAssembly: { compile(bytes: Uint8Array): Promise<PgliteWasmModule> };
type PgliteWasmModule = NonNullable<PGliteOptions['pgliteWasmModule']>;

/** PGlite's own module, as PGlite.create would compile it (dist/pglite.wasm beside its entry). */
async function compilePgliteWasm(): Promise<PgliteWasmModule> {
  const file = new URL('pglite.wasm', import.meta.resolve('@electric-sql/pglite'));
  return WebAssembly.compile(await readFile(file));
}
