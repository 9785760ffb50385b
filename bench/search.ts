/**
 * npm run bench:search -- [sizes=10000,100000]
 *
 * Latency: p50/p99 of keyword, vector and RRF search through the search service (the same code
 * the API runs; vector and RRF both with every vector scored exactly, as up to
 * vectorRankingDefaults.exactLimit vectors, and through the HNSW index, as above it) on the embedded defaults (PGlite with pgvector, hash embedder, 384 dims) over
 * a synthetic corpus of N segments in English and Norwegian. The corpus is written through the
 * knowledge index (the write path ingestion uses) and the per-model HNSW index is built after
 * the load, as a fresh install of that size would have it. Before timing, each search must
 * find the segment a query was cut from in its top 10 for a share of the queries (MIN_HIT_RATE),
 * or the bench exits 1.
 *
 * Baseline, in the same run over the same queries: the bare statement a developer would write
 * against the same tables, with no query parsing, ranking model or fusion: `ts_rank_cd` over a
 * `plainto_tsquery` match for keyword, the HNSW nearest-neighbour `order by <=> limit 10` for
 * vector (the query embedded the same way), and the two one after the other for RRF.
 *
 * BENCH_SEARCH_VARIANTS=keyword,rrf hnsw (labels, comma-separated; all five when unset) runs only
 * those variants: a keyword-only check skips the embeddings, the HNSW build and the slow exact
 * vector scan, and so takes minutes instead of tens of minutes at 100,000 segments.
 *
 * Search quality is measured by `npm run bench:quality`.
 */
import os from 'node:os';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/database.js';
import { createEmbedderCatalog } from '../src/embedding/embedder.js';
import { createHashEmbedder } from '../src/embedding/hash-embedder.js';
import { createSearchService, type SearchType } from '../src/search/search-service.js';
import { createKnowledgeIndex, type DocumentSegments } from '../src/search-index/knowledge-index.js';
import { abort, benchBreak, check, finish, target } from './lib/checks.js';
import { englishWords, norwegianWords, seededRandom, syntheticText } from './lib/synthetic-corpus.js';

const args = process.argv.slice(2);
const sizes = (args.find((arg) => /^\d/.test(arg)) ?? '10000,100000').split(',').map(Number);
const QUERIES = 200;
const SEGMENTS_PER_DOCUMENT = 10;
/**
 * Share of queries whose source segment must be in the top 10 (three of its words asked): a floor
 * that a broken search (BENCH_BREAK=wrong-results: 0 of 200) cannot reach, not a quality target
 * (bench:quality has those). Keyword search must also find at least as many sources as the bare
 * ts_rank_cd statement (below). Keyword found 90% at 2,000 segments, 88.5% at 10,000, 85% at
 * 30,000, 79% at 50,000 and 71% at 100,000; RRF through HNSW 71% at 100,000; the bare statement
 * 77.5%, 75.5-76.5% and 65.5% at 2,000, 10,000 and 100,000 (its ties fall in scan order).
 * 2026-11-27; keyword found the same 142 of 200 at 100,000 at 4e001e6^ (the 1,500-posting
 * budget), 9afdbd4 (where this check came) and 406daa8: no regression. The fall is the synthetic
 * corpus, not the ranking: BM25 with no candidate budget finds the same 142. Its tail is a fixed
 * 50,000 terms, so a term's segment count grows with the corpus (a tail term is in 5 segments at
 * the median at 10,000, in 51 at 100,000, 17 at the least) where real vocabularies grow too, and
 * every segment has token count 60: a query whose only indexed word is one tail term ("the
 * term28498 of") ties on BM25 with every segment holding it, and one of common words only ("view
 * the transaction") is outscored by hundreds holding them more often. Of the 58 misses at
 * 100,000, 26 tie with the 10th result (22 with nothing above them), 28 are outscored by 10 or
 * more, 4 are stop words only. Even the exact phrase would find only 11 more at 100,000. The
 * floor of 0.8, set at 2,000 segments, never held at 100,000; 0.65 is below every size measured,
 * but alone it would pass a ranking as poor as the bare statement at 100,000 (65.5%): hence the
 * relative check.
 * The hash embedder is lexical, and three words of a 60-word segment move its vector little, less
 * so among more segments: vector search found 51% at 2,000 segments; at 10,000, 23% scored
 * exactly and 13% through HNSW (2026-11-26).
 */
const MIN_HIT_RATE: Record<SearchType, number> = { keyword: 0.65, vector: 0.1, rrf: 0.65 };
const breakResults = benchBreak('wrong-results');

const VARIANT_LABELS = ['keyword', 'vector exact', 'vector hnsw', 'rrf exact', 'rrf hnsw'] as const;
type VariantLabel = (typeof VARIANT_LABELS)[number];
/** The variants BENCH_SEARCH_VARIANTS asks for (all when unset); an unknown label stops the bench. */
const selectedVariants: ReadonlySet<VariantLabel> = (() => {
  const asked = process.env.BENCH_SEARCH_VARIANTS;
  if (!asked) return new Set(VARIANT_LABELS);
  const labels = asked.split(',').map((label) => label.trim());
  const unknown = labels.filter((label) => !(VARIANT_LABELS as readonly string[]).includes(label));
  if (unknown.length > 0 || labels.length === 0)
    abort(
      `BENCH_SEARCH_VARIANTS: unknown variant(s) ${JSON.stringify(unknown)}; known: ${VARIANT_LABELS.join(', ')}`,
    );
  return new Set(labels as VariantLabel[]);
})();
/** Keyword search alone reads no vectors: the embeddings and the HNSW build are skipped. */
const needsVectors = [...selectedVariants].some((label) => label !== 'keyword');

/**
 * The corpus written through the knowledge index, the same write path ingestion uses
 * (indexDocuments, upsertEmbeddings, buildVectorIndexes), in batches of documents; the HNSW
 * index is built after the load, as a fresh install of that size would have it.
 */
async function seed(db: Db, size: number) {
  const next = seededRandom(size);
  const embedder = createHashEmbedder();
  const index = createKnowledgeIndex(db);
  const texts: string[] = [];
  const segmentIds: string[] = [];
  const BATCH = 50;
  for (let first = 0; first * SEGMENTS_PER_DOCUMENT < size; first += BATCH) {
    const entries: DocumentSegments[] = [];
    for (
      let documentIndex = first;
      documentIndex < first + BATCH && documentIndex * SEGMENTS_PER_DOCUMENT < size;
      documentIndex++
    ) {
      const norwegianText = documentIndex % 5 === 4;
      const url = `https://bench.example/${documentIndex}`;
      const segments = Array.from({ length: SEGMENTS_PER_DOCUMENT }, (_, segmentIndex) => ({
        segmentIndex,
        text: syntheticText(next, norwegianText ? norwegianWords : englishWords),
        tokenCount: 60,
        headingPath: ['Bench'],
      }));
      entries.push({
        document: {
          sourceKey: url,
          url,
          title: `Document ${documentIndex}`,
          language: norwegianText ? 'norwegian' : 'english',
          executionId: 'bench',
        },
        segments,
      });
    }
    const ids = (await index.indexDocuments(entries)).flat();
    const batchTexts = entries.flatMap((entry) => entry.segments.map((segment) => segment.text));
    if (needsVectors) {
      const vectors = await embedder.embed(batchTexts);
      await index.upsertEmbeddings(
        ids.map((segmentId, position) => ({
          segmentId,
          model: 'hash',
          vector: vectors[position] as Float32Array,
          executionId: 'bench',
        })),
      );
    }
    texts.push(...batchTexts);
    segmentIds.push(...ids);
  }
  if (!needsVectors) {
    await sql`analyze`.execute(db);
    return { texts, segmentIds, indexSeconds: 0, indexCpuSeconds: 0 };
  }
  const started = performance.now();
  // PGlite runs on this thread here: the process's CPU time is the build's, which a shared
  // machine's load does not inflate as it does the wall time.
  const cpuBefore = process.cpuUsage();
  const indexed = await index.buildVectorIndexes();
  const indexSeconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const indexCpuSeconds = (cpu.user + cpu.system) / 1e6;
  if (!indexed.includes('hash'))
    abort(`no HNSW index was built (models indexed: ${JSON.stringify(indexed)})`);
  await sql`analyze`.execute(db);
  return { texts, segmentIds, indexSeconds, indexCpuSeconds };
}

/** Three consecutive words of a random segment, with that segment: the one search should find. */
function queriesFrom(texts: readonly string[], segmentIds: readonly string[]) {
  const next = seededRandom(7);
  return Array.from({ length: QUERIES }, () => {
    const position = Math.floor(next() * texts.length);
    const words = (texts[position] as string).replace('.', '').split(' ');
    const start = Math.floor(next() * Math.max(1, words.length - 3));
    return { query: words.slice(start, start + 3).join(' '), source: segmentIds[position] as string };
  });
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

async function latency(run: (query: string) => Promise<unknown>, queries: readonly string[]) {
  for (const query of queries.slice(0, 20)) await run(query); // warm-up
  const timings: number[] = [];
  for (const query of queries) {
    const started = performance.now();
    await run(query);
    timings.push(performance.now() - started);
  }
  return { p50: percentile(timings, 50), p99: percentile(timings, 99) };
}

type Db = Parameters<typeof createSearchService>[0]['db'];

/** The bare statements of the baseline (see the module comment). */
function bareStatements(db: Db) {
  const embedder = createHashEmbedder();
  const keyword = (query: string) =>
    sql<{
      segment_id: string;
    }>`select segment_id from knowledge_segments, plainto_tsquery('english', ${query}) as q
        where search_vector @@ q order by ts_rank_cd(search_vector, q) desc limit 10`.execute(db);
  const vector = async (query: string) => {
    const [embedding] = await embedder.embed([query]);
    const literal = `[${Array.from(embedding as Float32Array).join(',')}]`;
    return sql`select segment_id from knowledge_embeddings where model = 'hash'
               order by embedding::vector(384) <=> ${literal}::vector(384) limit 10`.execute(db);
  };
  return {
    keyword,
    vector,
    rrf: async (query: string) => {
      await keyword(query);
      await vector(query);
    },
  } satisfies Record<SearchType, (query: string) => Promise<unknown>>;
}

async function latencyRun() {
  console.log(`machine: ${os.cpus()[0]?.model ?? 'unknown'} x${os.cpus().length}, node ${process.version}`);
  console.log('| segments | search | p50 ms | p99 ms | baseline p50 ms | baseline p99 ms | p50 / baseline |');
  console.log('|---|---|---|---|---|---|---|');
  for (const size of sizes) {
    const database = await openDatabase({});
    try {
      const seedStarted = performance.now();
      const { texts, segmentIds, indexSeconds, indexCpuSeconds } = await seed(database.db, size);
      console.error(
        `seeded ${size} segments in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s (HNSW build ${indexSeconds.toFixed(1)} s, ${indexCpuSeconds.toFixed(1)} s of CPU; load ${os.loadavg()[0]?.toFixed(1)})`,
      );
      const service = (exactVectorLimit: number) =>
        createSearchService({
          db: database.db,
          embedders: createEmbedderCatalog([createHashEmbedder()]),
          exactVectorLimit,
        });
      // Vector and RRF twice: every vector scored exactly, and through the HNSW index.
      const variants = (
        [
          { label: 'keyword', type: 'keyword', search: service(0) },
          { label: 'vector exact', type: 'vector', search: service(Number.POSITIVE_INFINITY) },
          { label: 'vector hnsw', type: 'vector', search: service(0) },
          { label: 'rrf exact', type: 'rrf', search: service(Number.POSITIVE_INFINITY) },
          { label: 'rrf hnsw', type: 'rrf', search: service(0) },
        ] as const
      ).filter((variant) => selectedVariants.has(variant.label));
      const asked = queriesFrom(texts, segmentIds);
      const queries = asked.map((entry) => entry.query);
      const bare = bareStatements(database.db);
      for (const { label, type, search } of variants) {
        // Correctness first: the segment a query was cut from is in its top 10.
        let found = 0;
        for (const [position, { query, source }] of asked.entries()) {
          // BENCH_BREAK=wrong-results: each query is checked against another query's segment.
          const expected = breakResults ? (asked[(position + 1) % asked.length]?.source as string) : source;
          const { results } = await search.search(type, { query, limit: 10 });
          if (results.some((result) => result.segment_id === expected)) found++;
        }
        const hitRate = found / asked.length;
        console.error(
          `${size} ${label}: the source segment in the top 10 for ${found} of ${asked.length} queries (target >= ${MIN_HIT_RATE[type]}: ${target(hitRate >= MIN_HIT_RATE[type], `${label} at ${size}: source in the top 10 for ${(hitRate * 100).toFixed(0)}% of queries`)})`,
        );
        check(found > 0, `${label} at ${size}: no query found its segment`);
        if (type === 'keyword') {
          // Relative to the bare ts_rank_cd statement over the same corpus and queries: BM25F
          // must find at least as many sources as the statement it is measured against.
          let bareFound = 0;
          for (const [position, { query, source }] of asked.entries()) {
            const expected = breakResults ? (asked[(position + 1) % asked.length]?.source as string) : source;
            const { rows } = await bare.keyword(query);
            if (rows.some((row) => row.segment_id === expected)) bareFound++;
          }
          console.error(
            `${size} keyword: the bare statement found ${bareFound} of ${asked.length} (target: keyword's ${found} >= it: ${target(found >= bareFound, `keyword at ${size}: ${found} sources in the top 10 against the bare statement's ${bareFound}`)})`,
          );
        }
        const timed = await latency((query) => search.search(type, { query, limit: 10 }), queries);
        const baseline = await latency(bare[type], queries);
        console.log(
          `| ${size} | ${label} | ${timed.p50.toFixed(2)} | ${timed.p99.toFixed(2)} | ${baseline.p50.toFixed(2)} | ${baseline.p99.toFixed(2)} | ${(timed.p50 / baseline.p50).toFixed(2)} |`,
        );
      }
    } finally {
      await database.close();
    }
  }
}

await latencyRun();
finish();
