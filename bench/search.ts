/**
 * npm run bench:search -- [sizes=10000,100000] [--quality <data dir>]
 *
 * Latency: p50/p99 of keyword, vector and RRF search through the search service (the same code
 * the API runs) on the embedded defaults (PGlite with pgvector, hash embedder, 384 dims) over
 * a synthetic corpus of N segments in English and Norwegian. The corpus is bulk-loaded with
 * the same SQL the knowledge index writes (to_tsvector per language, real[] vectors) and the
 * per-model HNSW index of migration 0005 is built after the load, as a fresh install of that
 * size would have it.
 *
 * Quality (--quality): hit@5 and MRR@10 of keyword, vector and RRF for the question set in
 * bench/questions/postgres-docs.json against an embedded database the ingestion pipeline
 * filled with the PostgreSQL documentation (its data dir). A question is answered when a
 * result's URL ends with one of its expected pages.
 */
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/database.js';
import { createEmbedderCatalog } from '../src/embedding/embedder.js';
import { createHashEmbedder } from '../src/embedding/hash-embedder.js';
import { documentIdFor, segmentIdFor } from '../src/knowledge/ids.js';
import { vectorIndexName } from '../src/knowledge/knowledge-index.js';
import { createSearchService, type SearchService, type SearchType } from '../src/search/search-service.js';

const args = process.argv.slice(2);
const qualityIndex = args.indexOf('--quality');
const qualityDir = qualityIndex >= 0 ? args[qualityIndex + 1] : undefined;
const sizes = (args.find((arg) => /^\d/.test(arg)) ?? '10000,100000').split(',').map(Number);
const QUERIES = 200;
const SEGMENTS_PER_DOCUMENT = 10;

/** A deterministic pseudo-random generator, so every run indexes the same corpus. */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const english = `the of and to in is for with on as by at from that this it be are or an which can not
database table index query vacuum transaction lock replication backup server client connection role
schema column row function trigger view sequence partition statistics planner cost memory buffer disk
write ahead log checkpoint archive recovery standby primary timeline constraint foreign key unique check
running runs ran insert update delete select join aggregate window sort hash merge nested loop scan`.split(
  /\s+/,
);
const norwegian = `og det er som på en til av ikke med har vi de den for kan skal om fra også et så
bil bilen bilene vei veien hus huset båt båten tog toget by byen land landet fjell fjellet vann vannet
kjører kjørte kjøre bygger bygde bygge leser leste lese skriver skrev skrive`.split(/\s+/);

function syntheticText(next: () => number, norwegianText: boolean): string {
  const words = norwegianText ? norwegian : english;
  const length = 40 + Math.floor(next() * 40);
  const out: string[] = [];
  for (let index = 0; index < length; index++) {
    // Half the words from a small common vocabulary (function words first, Zipf-like), half
    // from a long tail of 50,000 rarer terms, as in real documentation.
    if (next() < 0.5) out.push(words[Math.floor(words.length * next() ** 2)] as string);
    else out.push(`term${Math.floor(50_000 * next() ** 1.5)}`);
  }
  return `${out.join(' ')}.`;
}

async function seed(db: Parameters<typeof createSearchService>[0]['db'], size: number) {
  const next = random(size);
  const embedder = createHashEmbedder();
  const texts: string[] = [];
  const now = new Date().toISOString();
  for (let documentIndex = 0; documentIndex * SEGMENTS_PER_DOCUMENT < size; documentIndex++) {
    const norwegianText = documentIndex % 5 === 4;
    const language = norwegianText ? 'norwegian' : 'english';
    const url = `https://bench.example/${documentIndex}`;
    const documentId = documentIdFor(url);
    await sql`insert into knowledge_documents (document_id, source_key, url, title, language, execution_id, created_at, updated_at)
      values (${documentId}, ${url}, ${url}, ${`Document ${documentIndex}`}, ${language}, ${'bench'}, ${now}, ${now})`.execute(
      db,
    );
    const rows = [];
    for (let segmentIndex = 0; segmentIndex < SEGMENTS_PER_DOCUMENT; segmentIndex++) {
      const text = syntheticText(next, norwegianText);
      texts.push(text);
      rows.push({ id: segmentIdFor(documentId, segmentIndex), segmentIndex, text });
    }
    const vectors = await embedder.embed(rows.map((row) => row.text));
    await sql`insert into knowledge_segments (segment_id, document_id, segment_index, text, token_count, heading_path, language, search_vector, execution_id, updated_at)
      select s.id::uuid, ${documentId}::uuid, s.idx, s.text, 60, '["Bench"]', ${language},
             setweight(to_tsvector(${language}::regconfig, 'Bench'), 'A') || setweight(to_tsvector(${language}::regconfig, s.text), 'B'),
             'bench', ${now}
      from unnest(${rows.map((row) => row.id)}::text[], ${rows.map((row) => row.segmentIndex)}::int[], ${rows.map((row) => row.text)}::text[]) as s(id, idx, text)`.execute(
      db,
    );
    await sql`insert into knowledge_embeddings (segment_id, model, dimensions, embedding, execution_id, updated_at)
      select s.id::uuid, 'hash', 384, s.v::real[], 'bench', ${now}
      from unnest(${rows.map((row) => row.id)}::text[], ${vectors.map((vector) => `{${Array.from(vector).join(',')}}`)}::text[]) as s(id, v)`.execute(
      db,
    );
  }
  const indexName = vectorIndexName('hash');
  await sql`insert into knowledge_models (model, dimensions, vector_index, created_at) values ('hash', 384, ${indexName}, ${now})`.execute(
    db,
  );
  const started = performance.now();
  await sql
    .raw(
      `create index ${indexName} on knowledge_embeddings using hnsw ((embedding::vector(384)) vector_cosine_ops) where model = 'hash'`,
    )
    .execute(db);
  const indexSeconds = (performance.now() - started) / 1000;
  await sql`analyze`.execute(db);
  return { texts, indexSeconds };
}

function queriesFrom(texts: readonly string[]): string[] {
  const next = random(7);
  return Array.from({ length: QUERIES }, () => {
    const words = (texts[Math.floor(next() * texts.length)] as string).replace('.', '').split(' ');
    const start = Math.floor(next() * Math.max(1, words.length - 3));
    return words.slice(start, start + 3).join(' ');
  });
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

async function latency(search: SearchService, type: SearchType, queries: readonly string[]) {
  for (const query of queries.slice(0, 20)) await search.search(type, { query, limit: 10 }); // warm-up
  const timings: number[] = [];
  for (const query of queries) {
    const started = performance.now();
    await search.search(type, { query, limit: 10 });
    timings.push(performance.now() - started);
  }
  return { p50: percentile(timings, 50), p99: percentile(timings, 99) };
}

async function latencyRun() {
  console.log(`machine: ${os.cpus()[0]?.model ?? 'unknown'} x${os.cpus().length}, node ${process.version}`);
  console.log('| segments | search | p50 ms | p99 ms |');
  console.log('|---|---|---|---|');
  for (const size of sizes) {
    const database = await openDatabase({});
    try {
      const seedStarted = performance.now();
      const { texts, indexSeconds } = await seed(database.db, size);
      console.error(
        `seeded ${size} segments in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s (HNSW build ${indexSeconds.toFixed(1)} s)`,
      );
      const search = createSearchService({
        db: database.db,
        embedders: createEmbedderCatalog([createHashEmbedder()]),
      });
      const queries = queriesFrom(texts);
      for (const type of ['keyword', 'vector', 'rrf'] as const) {
        const { p50, p99 } = await latency(search, type, queries);
        console.log(`| ${size} | ${type} | ${p50.toFixed(2)} | ${p99.toFixed(2)} |`);
      }
    } finally {
      await database.close();
    }
  }
}

interface Question {
  question: string;
  /** Accepted pages: a result whose URL ends with one of them answers the question. */
  pages: string[];
}

async function qualityRun(dataDir: string) {
  const questions = JSON.parse(await readFile('bench/questions/postgres-docs.json', 'utf8')) as Question[];
  const database = await openDatabase({ dataDir });
  try {
    const search = createSearchService({
      db: database.db,
      embedders: createEmbedderCatalog([createHashEmbedder()]),
    });
    console.log(`${questions.length} questions over ${dataDir}`);
    console.log('| search | hit@5 | MRR@10 |');
    console.log('|---|---|---|');
    // RRF with equal weights (the default) and with the vector ranking weighted down, as suits
    // the hash embedder (shared words and word pieces, no semantics).
    const runs = [
      ['keyword', 'keyword', undefined],
      ['vector', 'vector', undefined],
      ['rrf', 'rrf', undefined],
      ['rrf (vector weight 0.5)', 'rrf', { keyword: 1, vector: 0.5 }],
      ['rrf (vector weight 0.3)', 'rrf', { keyword: 1, vector: 0.3 }],
    ] as const;
    for (const [label, type, weights] of runs) {
      let hits = 0;
      let reciprocal = 0;
      for (const item of questions) {
        // Questions are natural language: keyword matching takes any of their words.
        const response = await search.search(type, {
          query: item.question,
          limit: 10,
          match: 'any',
          ...(weights ? { weights } : {}),
        });
        const position = response.results.findIndex((result) =>
          item.pages.some((page) => (result.source.url ?? '').split('#')[0]?.endsWith(page)),
        );
        if (position >= 0 && position < 5) hits++;
        if (position >= 0) reciprocal += 1 / (position + 1);
      }
      console.log(
        `| ${label} | ${(hits / questions.length).toFixed(3)} | ${(reciprocal / questions.length).toFixed(3)} |`,
      );
    }
  } finally {
    await database.close();
  }
}

if (qualityDir) await qualityRun(qualityDir);
else await latencyRun();
