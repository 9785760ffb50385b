/**
 * npm run bench:ingest -- [directory]   (BENCH_PAGES=200 for a shorter run;
 * BENCH_DATABASE_URL=postgres://... to use an empty database on a PostgreSQL server)
 * The PostgreSQL documentation (Debian package postgresql-doc-15) served on loopback with a
 * generated sitemap, ingested end to end on the embedded defaults (PGlite in a data dir,
 * in-process broker, filesystem store, hash embedder): sitemap_parser -> url_expander ->
 * web_scraper -> html_to_markdown -> smart_segmenter -> segment_publisher ->
 * embedding_generator (which fills the knowledge index). Baseline, in the same run: the same
 * pages converted and segmented in one plain loop without the engine.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { uuidv7 } from 'uuidv7';
import { createBuiltinRegistry } from '../src/adapters/builtin.js';
import { createMemoryBroker } from '../src/broker/memory.js';
import { openDatabase } from '../src/db/database.js';
import { createStorageCatalogueRepository } from '../src/db/storage-catalogue-repository.js';
import { createEngine } from '../src/engine/create-engine.js';
import { createEventBus } from '../src/events/event-bus.js';
import { htmlToMarkdown } from '../src/markdown/html-to-markdown.js';
import { segmentMarkdown } from '../src/markdown/segmenter.js';
import { tokenCounter } from '../src/markdown/tokens.js';
import { createCatalogedObjectStore } from '../src/storage/cataloged.js';
import { createFilesystemObjectStore } from '../src/storage/fs.js';
import { serveDirectory } from './lib/serve-directory.js';
import { printStatementTimes, timeStatements } from './lib/statement-times.js';

const directory = process.argv[2] ?? '/usr/share/doc/postgresql-doc-15/html';
const segmentOptions = {
  maxTokens: 400,
  overlapTokens: 50,
  minTokens: 50,
  countTokens: tokenCounter('approximate'),
};

interface Figures {
  seconds: number;
  /** CPU seconds (user + system) of this process: steadier than wall time on a shared machine. */
  cpu: number;
  pages: number;
  segments: number;
  tokens: number;
}

async function baseline(files: string[]): Promise<Figures> {
  const bodies = await Promise.all(files.map((file) => readFile(path.join(directory, file), 'utf8')));
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  let segments = 0;
  let tokens = 0;
  for (const [index, html] of bodies.entries()) {
    const page = htmlToMarkdown(html, { url: `http://127.0.0.1/${files[index]}` });
    for (const segment of segmentMarkdown(page.markdown, segmentOptions)) {
      segments++;
      tokens += segment.token_count;
    }
  }
  return {
    seconds: (performance.now() - started) / 1000,
    cpu: cpuSeconds(cpuStart),
    pages: files.length,
    segments,
    tokens,
  };
}

async function engineRun(
  sitemapUrl: string,
): Promise<Figures & { failed: number; skipped: number; indexReadySeconds: number }> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'weir-bench-ingest-'));
  // BENCH_DATABASE_URL: a PostgreSQL server instead (give it an empty database).
  const database = await openDatabase(
    process.env.BENCH_DATABASE_URL ? { url: process.env.BENCH_DATABASE_URL } : { dataDir, timeStatements },
  );
  const storage = createCatalogedObjectStore(
    createFilesystemObjectStore(path.join(dataDir, 'objects')),
    createStorageCatalogueRepository(database.db),
  );
  const events = createEventBus();
  const { configs, executions, orchestrator, vectorIndexes } = createEngine({
    database,
    registry: createBuiltinRegistry(),
    broker: createMemoryBroker(),
    storage,
    events,
    now: () => new Date(),
    newId: uuidv7,
    logger: { info: () => {}, error: (object, message) => console.error(message, object) },
  });
  await orchestrator.start();
  const config = await configs.create({
    config_yaml: `name: bench-ingest
init_message:
  route: discover
  payload: { url: ${JSON.stringify(sitemapUrl)} }
routes:
  - id: discover
    adapters:
      - type: sitemap_parser
      - type: url_expander
        destination: pages
  - id: pages
    adapters:
      - type: web_scraper
        config: { rate_limit: 1000 }
        concurrency: 16
      - type: html_to_markdown
        concurrency: 4
      - type: smart_segmenter
        concurrency: 4
      - type: segment_publisher
        destination: embed
  - id: embed
    adapters:
      - type: embedding_generator
        batch: { size: 64, max_wait_ms: 20 }
        concurrency: 4
`,
  });
  if (!config.is_runnable) throw new Error(JSON.stringify(config.validation_report, null, 2));
  const finished = new Promise<string>((resolve) =>
    events.subscribe((event) => {
      if (event.type.startsWith('execution.') && event.type !== 'execution.started') resolve(event.type);
    }),
  );
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  const execution = await orchestrator.run(config.id);
  const outcome = await finished;
  const seconds = (performance.now() - started) / 1000;
  // The model's HNSW index is built after the execution ends; search scans exactly until then.
  await vectorIndexes.whenIdle();
  const indexReadySeconds = (performance.now() - started) / 1000;
  const cpu = cpuSeconds(cpuStart);
  const statistics = await executions.statistics(execution.id);
  if (outcome !== 'execution.completed') throw new Error(`${outcome}: ${JSON.stringify(statistics)}`);
  const counts = await database.db
    .selectFrom('knowledge_segments')
    .select((eb) => [eb.fn.countAll<number>().as('segments'), eb.fn.sum<number>('token_count').as('tokens')])
    .executeTakeFirstOrThrow();
  const pages = await database.db
    .selectFrom('knowledge_documents')
    .select((eb) => eb.fn.countAll<number>().as('pages'))
    .executeTakeFirstOrThrow();
  const skipped = await database.db
    .selectFrom('lineage')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('execution_id', '=', execution.id)
    .where('status', '=', 'skipped')
    .executeTakeFirstOrThrow();
  await orchestrator.stop();
  await printStatementTimes(database);
  await database.close();
  // BENCH_KEEP_DATA=1 keeps the filled data dir, e.g. for `npm run bench:search -- --quality <dir>`.
  if (process.env.BENCH_KEEP_DATA) console.log(`data dir kept: ${dataDir}`);
  else await rm(dataDir, { recursive: true, force: true });
  return {
    seconds,
    cpu,
    pages: Number(pages.pages),
    segments: Number(counts.segments),
    tokens: Number(counts.tokens),
    failed: statistics.failed_messages,
    skipped: Number(skipped.count),
    indexReadySeconds,
  };
}

function cpuSeconds(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1e6;
}

const site = await serveDirectory(directory, Number(process.env.BENCH_PAGES ?? Number.POSITIVE_INFINITY));
try {
  console.log(`${site.pages.length} pages from ${directory} on ${site.baseUrl}; ${os.cpus().length} cores`);
  const plain = await baseline(site.pages);
  const engine = await engineRun(`${site.baseUrl}/sitemap.xml`);
  const rate = (figures: Figures) =>
    `${figures.seconds.toFixed(2)} s, ${(figures.pages / figures.seconds).toFixed(0)} pages/s, ${(figures.tokens / figures.seconds / 1000).toFixed(0)}k tokens/s, CPU ${figures.cpu.toFixed(2)} s`;
  console.log(`| Run | Pages | Segments | Tokens | Time and rate |`);
  console.log(`|---|---|---|---|---|`);
  console.log(
    `| baseline: convert + segment in one loop | ${plain.pages} | ${plain.segments} | ${plain.tokens} | ${rate(plain)} |`,
  );
  console.log(
    `| engine: fetch, convert, segment, embed, index | ${engine.pages} | ${engine.segments} | ${engine.tokens} | ${rate(engine)} |`,
  );
  console.log(
    `engine / baseline time: ${(engine.seconds / plain.seconds).toFixed(2)}x; vector index ready after ${engine.indexReadySeconds.toFixed(2)} s; failed messages ${engine.failed}, skipped ${engine.skipped}`,
  );
} finally {
  await site.close();
}
