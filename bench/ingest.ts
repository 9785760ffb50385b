/**
 * npm run bench:ingest -- [directory]   (BENCH_PAGES=200 for a shorter run;
 * BENCH_DATABASE_URL=postgres://... to use an empty database on a PostgreSQL server;
 * BENCH_BROKER_URL=stomp://... for RabbitMQ over STOMP instead of the in-process queues)
 * The PostgreSQL documentation (Debian package postgresql-doc-15) served on loopback with a
 * generated sitemap, ingested end to end on the embedded defaults (PGlite in a data dir,
 * in-process broker, filesystem store, hash embedder): sitemap_parser -> url_expander ->
 * web_scraper -> html_to_markdown -> smart_segmenter -> segment_publisher ->
 * embedding_generator (which fills the knowledge index). Baseline, in the same run: the same
 * pages converted and segmented in one plain loop without the engine, before and after it (the faster counts).
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { htmlToMarkdown } from '../src/markdown/html-to-markdown.js';
import { segmentMarkdown } from '../src/markdown/segmenter.js';
import { tokenCounter } from '../src/markdown/tokens.js';
import { loadSettings } from '../src/settings.js';
import { benchBreak, check, finish } from './lib/checks.js';
import { cpuSeconds, ingestCorpus } from './lib/ingest-corpus.js';
import { dataDigest } from './lib/ingest-digest.js';
import { describeReadiness, type SearchReadiness } from './lib/ingest-readiness.js';
import { printIngestTimeline, sampleThreads } from './lib/ingest-timeline.js';
import { serveDirectory } from './lib/serve-directory.js';
import { describeRunResources, type ServerCpuSpent } from './lib/server-cpu.js';
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

async function engineRun(sitemapUrl: string): Promise<
  Figures & {
    failed: number;
    skipped: number;
    readiness: SearchReadiness;
    graphBuiltSeconds: number;
    threads: string;
    indexThreads: string;
    digest: string;
    mainThreadCpu: number;
    serverCpu: ServerCpuSpent;
  }
> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'weir-bench-ingest-'));
  // BENCH_DATABASE_URL: a PostgreSQL server instead (give it an empty database).
  const run = await ingestCorpus({
    sitemapUrl,
    dataDir,
    databaseUrl: process.env.BENCH_DATABASE_URL,
    brokerUrl: process.env.BENCH_BROKER_URL,
    timeStatements,
    // The corpus is served on loopback: the fetchers' egress policy must allow it.
    settings: loadSettings({ WEIR_DATA_DIR: dataDir, WEIR_FETCH_ALLOWED_CIDRS: '127.0.0.0/8' }),
  });
  const { database } = run;
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
    .where('execution_id', '=', run.executionId)
    .where('status', '=', 'skipped')
    .executeTakeFirstOrThrow();
  await printStatementTimes(database);
  const digest = await dataDigest(database);
  if (process.env.BENCH_TIMELINE === '1') await printIngestTimeline(database, run.executionId);
  await database.close();
  // BENCH_KEEP_DATA=1 keeps the filled data dir, e.g. for `npm run bench:quality -- --reuse <dir>`.
  if (process.env.BENCH_KEEP_DATA) console.log(`data dir kept: ${dataDir}`);
  else await rm(dataDir, { recursive: true, force: true });
  return {
    seconds: run.seconds,
    cpu: run.cpu,
    pages: Number(pages.pages),
    segments: Number(counts.segments),
    tokens: Number(counts.tokens),
    failed: run.failedMessages,
    skipped: Number(skipped.count),
    readiness: run.readiness,
    graphBuiltSeconds: run.graphBuiltSeconds,
    threads: run.threads,
    indexThreads: run.indexThreads,
    digest,
    mainThreadCpu: run.mainThreadCpu,
    serverCpu: run.serverCpu,
  };
}

const pageLimit = Number(process.env.BENCH_PAGES ?? Number.POSITIVE_INFINITY);
/** BENCH_BREAK=missing-page: the first page is listed in the sitemap but answers 404, so it is never indexed. */
const withheldPage = benchBreak('missing-page')
  ? (await readdir(directory)).filter((name) => name.endsWith('.html')).sort()[0]
  : undefined;
const site = await serveDirectory(directory, pageLimit, withheldPage);
/** The server path's run, for its CPU by part once the page server has said its own. */
let serverRun: Parameters<typeof describeRunResources>[0] | undefined;
try {
  console.log(`${site.pages.length} pages from ${directory} on ${site.baseUrl}; ${os.cpus().length} cores`);
  // The loop runs before and after the engine and the faster counts: one 1.2 s loop on a shared
  // machine swung from 1.1 to 3.3 s between quiet runs, which moved the ratio more than any change did.
  const before = await baseline(site.pages);
  const sampler = process.env.BENCH_TIMELINE === '1' ? sampleThreads() : undefined;
  const engine = await engineRun(`${site.baseUrl}/sitemap.xml`);
  if (sampler) console.log(sampler.stop());
  const after = await baseline(site.pages);
  const plain = after.seconds < before.seconds ? after : before;
  const rate = (figures: Figures) =>
    `${figures.seconds.toFixed(2)} s, ${(figures.pages / figures.seconds).toFixed(0)} pages/s, ${(figures.tokens / figures.seconds / 1000).toFixed(0)}k tokens/s, CPU ${figures.cpu.toFixed(2)} s`;
  console.log(`| Run | Pages | Segments | Tokens | Time and rate |`);
  console.log(`|---|---|---|---|---|`);
  console.log(
    `| baseline: convert + segment in one loop (the faster of ${before.seconds.toFixed(2)} s before and ${after.seconds.toFixed(2)} s after) | ${plain.pages} | ${plain.segments} | ${plain.tokens} | ${rate(plain)} |`,
  );
  console.log(
    `| engine: fetch, convert, segment, embed, index | ${engine.pages} | ${engine.segments} | ${engine.tokens} | ${rate(engine)} |`,
  );
  console.log(
    `engine / baseline time: ${(engine.seconds / plain.seconds).toFixed(2)}x; failed messages ${engine.failed}, skipped ${engine.skipped}`,
  );
  console.log(describeReadiness(engine.readiness, engine.seconds));
  console.log(
    `HNSW graph built at ${engine.graphBuiltSeconds.toFixed(2)} s (${process.env.BENCH_DATABASE_URL ? 'server: as the run ended' : 'PGlite: at the first quiet moment'})`,
  );
  console.log(`${engine.threads} (from the run request to the execution's end)`);
  console.log(`${engine.indexThreads} (from the execution's end until searches ranked from memory)`);
  console.log(`data digest (md5 per table; equal digests, equal data): ${engine.digest}`);
  if (process.env.BENCH_DATABASE_URL)
    serverRun = { ...engine, servers: engine.serverCpu, pageServer: 0, cores: os.availableParallelism() };
  // Figures of a run that lost pages mean nothing: every page served must be indexed, with no
  // message failed or skipped (the corpus has no missing page to skip).
  const passed = [
    check(engine.failed === 0, `${engine.failed} messages failed`),
    check(engine.skipped === 0, `${engine.skipped} messages skipped`),
    check(
      engine.pages === site.pages.length,
      `${engine.pages} documents indexed of ${site.pages.length} pages the sitemap listed`,
    ),
    // BENCH_EXPECT_DIGEST: another run's digest line (same pages and BENCH_CORPUS_PORT: the
    // address is in the text), so a change to how ingestion runs shows it indexed the same data.
    check(
      !process.env.BENCH_EXPECT_DIGEST || process.env.BENCH_EXPECT_DIGEST === engine.digest,
      `data digest ${engine.digest} differs from BENCH_EXPECT_DIGEST ${process.env.BENCH_EXPECT_DIGEST}`,
    ),
  ].every(Boolean);
  if (passed)
    console.log(
      `check: passed (${engine.pages} of ${site.pages.length} pages indexed, no message failed or skipped)`,
    );
} finally {
  // The page server runs in a child process (serve-directory.ts): its CPU is not the service's.
  const pageServer = await site.close();
  console.log(`page server (a child process): ${pageServer.toFixed(2)} s of CPU over the whole bench`);
  // The server path: whose CPU the run used, against what the cores offered (server-cpu.ts).
  if (serverRun) console.log(describeRunResources({ ...serverRun, pageServer }));
}
finish();
