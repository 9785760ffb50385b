/**
 * bench:corpus-lsa --chosen's look at the service itself with WEIR_SEARCH_LSA=on, over the data
 * dir's database, as the embedded service runs (keyword ranking in memory): the LSA build's
 * time and memory, then each question through RRF with and without the list, alternately, so
 * both latencies see the same load.
 */
import type { openDatabase } from '../../src/db/database.js';
import { createKeywordMemoryIndex } from '../../src/search/keyword-memory-index.js';
import type { SearchService } from '../../src/search/search-service.js';
import { check } from './checks.js';
import { dataDirSearch } from './data-dir-search.js';

type Database = Awaited<ReturnType<typeof openDatabase>>;

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);

/** Builds the service's LSA vectors and says what it cost: wall and CPU time, RSS kept and peak. */
export async function buildServiceLsa(database: Database, dataDir: string) {
  const keywordIndexes = [createKeywordMemoryIndex(database.db), createKeywordMemoryIndex(database.db)];
  await Promise.all(keywordIndexes.map((index) => index.ready()));
  const plain = dataDirSearch(database, dataDir, { keywordIndex: keywordIndexes[0] });
  const withLsa = dataDirSearch(database, dataDir, { lsa: true, keywordIndex: keywordIndexes[1] });
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const memoryBefore = process.memoryUsage();
  const before = memoryBefore.rss;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 20);
  const started = performance.now();
  await withLsa.lsa?.ready();
  const wall = performance.now() - started;
  clearInterval(sampler);
  gc?.();
  const memoryAfter = process.memoryUsage();
  const after = memoryAfter.rss;
  const build = withLsa.lsa?.lastBuild();
  check(
    build !== undefined && withLsa.lsa?.state() === 'ready',
    `the service's LSA build: ${withLsa.lsa?.state()}`,
  );
  console.log(
    `service LSA build: ${(wall / 1000).toFixed(1)} s wall (reading ${((build?.readMs ?? 0) / 1000).toFixed(1)} s; ` +
      `worker ${((build?.workerMs ?? 0) / 1000).toFixed(1)} s wall, ${((build?.workerCpuMs ?? 0) / 1000).toFixed(1)} s CPU); ` +
      `${build?.segments} segments, ${build?.terms} terms, rank ${build?.rank}; vectors and look-ups ${mib(build?.bytes ?? 0)} MiB; ` +
      `RSS ${mib(before)} -> ${mib(after)} MiB after (${gc ? 'after gc' : 'no gc: run with NODE_OPTIONS=--expose-gc'}; ` +
      `heap +${mib(memoryAfter.heapUsed - memoryBefore.heapUsed)}, array buffers +${mib(memoryAfter.arrayBuffers - memoryBefore.arrayBuffers)} MiB), ` +
      `peak ${mib(peak)} MiB during`,
  );
  return { plain: plain.search, withLsa: withLsa.search };
}

/** Every question through RRF with and without the list; the lists with it, and both took_ms p50s. */
export async function askService(
  services: { plain: SearchService; withLsa: SearchService },
  questions: readonly { id: string; question: string }[],
) {
  const lists: string[][] = [];
  const took = { plain: [] as number[], withLsa: [] as number[] };
  for (const q of questions) {
    const off = await services.plain.search('rrf', { query: q.question, limit: 50 });
    const on = await services.withLsa.search('rrf', { query: q.question, limit: 50 });
    check(on.parameters.lsa_ranking === 'used', `${q.id}: lsa_ranking ${String(on.parameters.lsa_ranking)}`);
    check(off.parameters.keyword_ranking === 'memory', `${q.id}: keyword ranking in memory`);
    lists.push(on.results.map((x) => x.segment_id));
    took.plain.push(off.took_ms);
    took.withLsa.push(on.took_ms);
  }
  const p50 = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  console.log(
    `service rrf took_ms p50: ${p50(took.plain)} without the list, ${p50(took.withLsa)} with it (alternating, same load)`,
  );
  return lists;
}
