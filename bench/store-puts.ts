/**
 * npx tsx bench/store-puts.ts -- [count=3000] [concurrency=8] [bytes=6000]
 * The filesystem object store's puts as an ingestion makes them, without the engine around
 * them: `count` objects of `bytes` bytes, each with its sidecar, keyed `<execution>/<stage>/…`
 * across a few stage folders, `concurrency` at a time, into a fresh temporary root. Prints this
 * process's user and system CPU for the puts (the figure to compare checkouts by on a shared
 * machine; wall time is printed but means little under load). Exits 1 unless every object
 * stats back with its size and sha256 and reads back whole (BENCH_BREAK=changed-object
 * rewrites the last object's file behind the store's back before it is read).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createFilesystemObjectStore } from '../src/storage/fs.js';
import { benchBreak, check, finish } from './lib/checks.js';

const count = Number(process.argv[2] ?? 3000);
const concurrency = Number(process.argv[3] ?? 8);
const bytes = Number(process.argv[4] ?? 6000);
const root = await mkdtemp(path.join(os.tmpdir(), 'weir-bench-store-'));
const store = createFilesystemObjectStore(root);
const execution = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
const stages = ['fetcher', 'converter', 'embedder'];
const bodies = stages.map(() => randomBytes(bytes));

function keyFor(index: number): string {
  return `${execution}/${stages[index % stages.length]}/pages/page-${index}.bin`;
}

async function putAll(): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const index = next++;
      await store.put(keyFor(index), bodies[index % stages.length] as Buffer, {
        contentType: 'application/octet-stream',
        metadata: {
          execution_id: execution,
          stage: stages[index % stages.length],
          correlation_id: `m-${index}`,
        },
      });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

const startCpu = process.cpuUsage();
const startWall = performance.now();
await putAll();
const wall = performance.now() - startWall;
const cpu = process.cpuUsage(startCpu);

// Every object is there, whole, with the sidecar the put wrote.
const shas = bodies.map((body) => createHash('sha256').update(body).digest('hex'));
for (let index = 0; index < count; index += 1) {
  const info = await store.stat(keyFor(index));
  const expected = shas[index % stages.length];
  const whole =
    info?.sha256 === expected && info?.size === bytes && info?.metadata.correlation_id === `m-${index}`;
  if (!check(whole, `object ${index} stats back with its sidecar`)) break;
}
if (benchBreak('changed-object'))
  await writeFile(path.join(root, ...keyFor(count - 1).split('/')), 'changed');
const sample = await store.get(keyFor(count - 1));
check(sample.equals(bodies[(count - 1) % stages.length] as Buffer), 'the last object reads back whole');
await rm(root, { recursive: true, force: true });

const perPut = (micros: number) => (micros / count).toFixed(1);
console.log(
  `puts ${count} x ${bytes} B, ${concurrency} at a time: user ${(cpu.user / 1000).toFixed(0)} ms ` +
    `(${perPut(cpu.user)} µs/put), system ${(cpu.system / 1000).toFixed(0)} ms (${perPut(cpu.system)} µs/put), ` +
    `user+system ${perPut(cpu.user + cpu.system)} µs/put, wall ${wall.toFixed(0)} ms`,
);
finish();
