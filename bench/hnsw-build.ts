/**
 * npm run bench:hnsw-build -- [rows=20000] [--m 12] [--ef-construction 48] [--memory 1GB|sized]
 *   [--storage expression|vector|halfvec] [--queries 100]
 *
 * The HNSW build alone on embedded PGlite with pgvector (issue 35): `rows` hash-embedded
 * synthetic segments (384 dimensions, as bench:search's corpus), then one `create index`, timed
 * in CPU (PGlite runs on this thread, so the process's CPU time is the build's and a shared
 * machine's load does not inflate it as it does wall time). Then recall@10 of the index
 * against an exact scan of the same vectors at hnsw.ef_search 100 (the service's setting),
 * over `queries` three-word queries, so that a cheaper build is judged with what it costs.
 *
 * `--storage`: `expression` is the service's index (`embedding::vector(384)` over `real[]`,
 * migration 0005); `vector` and `halfvec` build from a stored column of that type instead.
 * `--memory`: maintenance_work_mem for the build, or `sized` for the service's own sizing
 * (knowledge-vectors.ts hnswBuildMemoryKb). Prints one JSON line; pgvector's notice that the
 * graph no longer fits in memory is in `notices`.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { pgliteStartParams } from '../src/db/pglite-settings.js';
import { hashEmbedding } from '../src/embedding/hash-embedder.js';
import { hnswBuildMemoryKb } from '../src/search-index/knowledge-vectors.js';
import { benchBreak, check, finish } from './lib/checks.js';
import { englishWords, seededRandom, syntheticText } from './lib/synthetic-corpus.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 && args[at + 1] !== undefined ? (args[at + 1] as string) : fallback;
};
const rows = Number(args.find((arg) => /^\d+$/.test(arg)) ?? 20_000);
const m = Number(option('m', '12'));
const efConstruction = Number(option('ef-construction', '48'));
const memory = option('memory', 'sized');
const storage = option('storage', 'expression');
const queries = Number(option('queries', '100'));
const DIMENSIONS = 384;
const breakRecall = benchBreak('wrong-results');
if (!['expression', 'vector', 'halfvec'].includes(storage)) throw new Error(`unknown --storage ${storage}`);

const next = seededRandom(rows);

const pglite = await PGlite.create(undefined, { extensions: { vector }, startParams: pgliteStartParams() });
const column = storage === 'expression' ? '' : `, stored ${storage}(${DIMENSIONS})`;
await pglite.exec(
  `create extension if not exists vector; create table e (id integer primary key, embedding real[] not null${column})`,
);
for (let first = 0; first < rows; first += 500) {
  const values: string[] = [];
  for (let id = first; id < Math.min(rows, first + 500); id++) {
    const literal = Array.from(hashEmbedding(syntheticText(next), DIMENSIONS)).join(',');
    values.push(`(${id}, '{${literal}}'${storage === 'expression' ? '' : `, '[${literal}]'`})`);
  }
  await pglite.exec(`insert into e values ${values.join(',')}`);
}

const memoryKb = memory === 'sized' ? hnswBuildMemoryKb(rows, DIMENSIONS, 65_536) : undefined;
await pglite.exec(`set maintenance_work_mem = '${memoryKb === undefined ? memory : `${memoryKb}kB`}'`);
const key = storage === 'expression' ? `(embedding::vector(${DIMENSIONS}))` : 'stored';
const type = storage === 'halfvec' ? `halfvec(${DIMENSIONS})` : `vector(${DIMENSIONS})`;
const notices: string[] = [];
const cpuBefore = process.cpuUsage();
const started = performance.now();
await pglite.query(
  `create index e_hnsw on e using hnsw (${key} ${storage === 'halfvec' ? 'halfvec' : 'vector'}_cosine_ops) with (m = ${m}, ef_construction = ${efConstruction})`,
  [],
  { onNotice: (notice) => notices.push(notice.message ?? String(notice)) },
);
const wallSeconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);

// Recall@10: the index's top 10 against every row scored ("+ 0" keeps the sort key from
// matching the index, as the service's exact ranking does).
await pglite.exec('set hnsw.ef_search = 100');
let found = 0;
for (let query = 0; query < queries; query++) {
  const literal = `[${Array.from(hashEmbedding(syntheticText(next, englishWords, 3), DIMENSIONS)).join(',')}]`;
  const indexed = await pglite.query<{ id: number }>(
    `select id from e order by ${key} <=> $1::${type} limit 10`,
    [literal],
  );
  // The deliberate break compares the index's answer with another query's exact answer.
  const exactLiteral = breakRecall
    ? `[${Array.from(hashEmbedding(syntheticText(next, englishWords, 3), DIMENSIONS)).join(',')}]`
    : literal;
  const exact = await pglite.query<{ id: number }>(
    `select id from e order by (${key} <=> $1::${type}) + 0, id limit 10`,
    [exactLiteral],
  );
  const exactIds = new Set(exact.rows.map((row) => row.id));
  found += indexed.rows.filter((row) => exactIds.has(row.id)).length;
}
const size = await pglite.query<{ size: string }>(
  `select pg_size_pretty(pg_relation_size('e_hnsw')) as size`,
);
const recall = found / (queries * 10);
console.log(
  JSON.stringify({
    rows,
    storage,
    m,
    efConstruction,
    maintenanceWorkMem: memoryKb === undefined ? memory : `${memoryKb}kB`,
    buildCpuSeconds: Number(((cpu.user + cpu.system) / 1e6).toFixed(2)),
    buildWallSeconds: Number(wallSeconds.toFixed(2)),
    indexSize: size.rows[0]?.size,
    recallAt10: Number(recall.toFixed(3)),
    notices,
  }),
);
await pglite.close();
// A floor that a broken index cannot reach, not a quality target (the hash embedder over
// synthetic text: recall@10 0.49 at 100,000 rows, 0.69 at 20,000).
check(recall > 0.3, `recall@10 ${recall.toFixed(3)} is at most 0.3`);
finish();
