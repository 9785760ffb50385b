/**
 * The worker side of pglite-thread.ts: owns one PGlite instance (with pgvector) and runs the
 * statements the service thread sends, one at a time, in the order they arrive.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import type { PgliteWorkerData, ThreadReply, ThreadRequest } from './pglite-thread.js';

const port = parentPort;
if (!port) throw new Error('pglite-worker.ts runs as a worker thread only');

const { dataDir, timeStatements, startParams } = workerData as PgliteWorkerData;
/** Count and milliseconds per statement text, when timing was asked for (benchmarks). */
const times = timeStatements ? new Map<string, { count: number; milliseconds: number }>() : undefined;

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

try {
  const pglite = await PGlite.create(dataDir, {
    extensions: { vector },
    ...(startParams ? { startParams } : {}),
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
        const result = await pglite.query(request.sql, request.params);
        if (times) {
          const statement = request.sql.replace(/\s+/g, ' ').trim().slice(0, 80);
          const time = times.get(statement) ?? { count: 0, milliseconds: 0 };
          time.count++;
          time.milliseconds += performance.now() - started;
          times.set(statement, time);
        }
        reply = { id: request.id, rows: result.rows, affectedRows: result.affectedRows };
      }
    } catch (error) {
      reply = { id: request.id, error: describeError(error) };
    }
    port.postMessage({ ...reply, inTransaction: !pglite.closed && pglite.isInTransaction() });
  });
  port.postMessage({ id: 0, rows: [] } satisfies ThreadReply);
} catch (error) {
  port.postMessage({ id: 0, error: describeError(error) } satisfies ThreadReply);
}
