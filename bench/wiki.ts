/**
 * npm run bench:wiki -- [--pages 2000] [--attachments 500] [--latency-ms 20] [--rate 100]
 *
 * A Confluence Cloud space on the loopback double (test/helpers/confluence-double.ts) with
 * `--pages` pages in storage format and `--attachments` DOCX attachments (one each on the first
 * pages), every answer delayed `--latency-ms`, and the double's own rate limit of `--rate` API
 * requests per second (429 with Retry-After beyond a fifth of a second's burst). The whole
 * chain runs on the embedded defaults: wiki_space_crawler -> wiki_page_fetcher ->
 * storage_retriever -> html_to_markdown -> smart_segmenter -> segment_publisher ->
 * embedding_generator, and wiki_attachment_fetcher -> document_converter -> the same.
 *
 * Baseline: the rate-limit-bound time, the API requests the run made divided by the rate; no
 * client can list and fetch faster without being refused. Printed: pages/s, the share of the
 * bound (bound time / run time; the target is at least 0.8), the 429s the double answered, and
 * the CPU the process used over the run in cores (the target is under one). The run fails when
 * any message failed, the index does not hold every page and attachment, or a target is missed
 * (exit 1). BENCH_BREAK=lost-page: the last page is listed, then answers 404 when fetched.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { loadSettings } from '../src/settings.js';
import {
  DOUBLE_TOKEN,
  DOUBLE_USER,
  type DoublePage,
  startConfluenceDouble,
} from '../test/helpers/confluence-double.js';
import { benchBreak, check, finish, target } from './lib/checks.js';
import { runTimed, startBenchEngine } from './lib/ingest-corpus.js';

const { values } = parseArgs({
  options: {
    pages: { type: 'string', default: '2000' },
    attachments: { type: 'string', default: '500' },
    'latency-ms': { type: 'string', default: '20' },
    rate: { type: 'string', default: '100' },
  },
});
const pageCount = Number(values.pages);
const attachmentCount = Math.min(Number(values.attachments), pageCount);
const latencyMs = Number(values['latency-ms']);
const rate = Number(values.rate);
/** BENCH_BREAK=lost-page: the last page is deleted between listing and fetching, so it is never indexed. */
const losePage = benchBreak('lost-page');

const topics = [
  'vacuum',
  'replication',
  'partitioning',
  'indexes',
  'backups',
  'monitoring',
  'locking',
  'extensions',
];

function pageBody(index: number): string {
  const topic = topics[index % topics.length] as string;
  const paragraphs = Array.from(
    { length: 6 },
    (_, paragraph) =>
      `<p>Runbook ${index}, part ${paragraph}: how the team handles ${topic} on cluster ${index % 37}. ` +
      `Check the dashboards, confirm the ${topic} settings, and record what changed in ticket OPS-${index * 7 + paragraph}.</p>`,
  ).join('\n');
  return (
    `<h2>Overview</h2>\n${paragraphs}\n<h2>Commands</h2>\n` +
    `<ac:structured-macro ac:name="code"><ac:parameter ac:name="language">sql</ac:parameter>` +
    `<ac:plain-text-body><![CDATA[SELECT * FROM pg_stat_activity WHERE query ILIKE '%${topic}%';]]></ac:plain-text-body></ac:structured-macro>\n` +
    `<ac:structured-macro ac:name="note"><ac:rich-text-body><p>Escalate ${topic} problems to the on-call DBA.</p></ac:rich-text-body></ac:structured-macro>`
  );
}

async function main(): Promise<void> {
  const memo = await readFile(new URL('../test/fixtures/documents/memo.docx', import.meta.url));
  const pages: DoublePage[] = Array.from({ length: pageCount }, (_, index) => ({
    id: String(100_000 + index),
    title: `Runbook ${index}`,
    version: 1,
    storage: pageBody(index),
    ...(index < attachmentCount
      ? {
          attachments: [
            {
              id: String(900_000 + index),
              filename: `Møtereferat ${index}.docx`,
              mediaType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
              bytes: memo,
            },
          ],
        }
      : {}),
    ...(losePage && index === pageCount - 1 ? { deletedAfterListing: true } : {}),
  }));
  const wiki = await startConfluenceDouble({ pages, maxLimit: 250, latencyMs, requestsPerSecond: rate });
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'weir-bench-wiki-'));
  const engine = await startBenchEngine({
    dataDir,
    settings: loadSettings(
      {},
      {
        fetch_allowed_cidrs: ['127.0.0.0/8'],
        secrets: { wiki: DOUBLE_TOKEN },
        secret_origins: { wiki: [wiki.url] },
      },
    ),
  });
  const { database, orchestrator, vectorIndexes } = engine;
  const connection = `{ provider: confluence_cloud, base_url: "${wiki.url}", username: "${DOUBLE_USER}", token_secret: wiki, rate_limit: ${rate} }`;
  const yaml = `name: bench-wiki
init_message:
  route: crawl
  payload: { space: ENG }
routes:
  - id: crawl
    adapters:
      - type: wiki_space_crawler
        config: ${connection}
        destination: pages
  - id: pages
    adapters:
      - type: wiki_page_fetcher
        config: ${connection.replace(/ }$/, ', attachment_destination: attachments }')}
        concurrency: 16
        destination: markdown
  - id: markdown
    adapters:
      - type: storage_retriever
        concurrency: 4
      - type: html_to_markdown
        concurrency: 4
      - type: smart_segmenter
        concurrency: 4
      - type: segment_publisher
        destination: embed
  - id: attachments
    adapters:
      - type: wiki_attachment_fetcher
        config: ${connection}
        concurrency: 16
      - type: document_converter
        concurrency: 2
      - type: smart_segmenter
      - type: segment_publisher
        destination: embed
  - id: embed
    adapters:
      - type: embedding_generator
        batch: { size: 64, max_wait_ms: 20 }
        concurrency: 4
`;
  try {
    const { outcome, seconds, cpu, statistics } = await runTimed(engine, yaml);
    const documents = await sql<{ count: string }>`select count(*) as count from knowledge_documents`.execute(
      database.db,
    );
    const indexed = Number(documents.rows[0]?.count);
    const apiRequests = wiki.requests.length;
    const boundSeconds = apiRequests / rate;
    console.log(
      `machine: ${os.cpus()[0]?.model} x${os.cpus().length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`,
    );
    console.log(
      `space: ${pageCount} pages, ${attachmentCount} DOCX attachments; double: ${latencyMs} ms per answer, ${rate} API requests/s`,
    );
    console.log(
      `  run:            ${seconds.toFixed(2)} s, ${(pageCount / seconds).toFixed(1)} pages/s (${outcome})`,
    );
    console.log(
      `  bound:          ${boundSeconds.toFixed(2)} s for ${apiRequests} API requests (429s included), ${(pageCount / boundSeconds).toFixed(1)} pages/s`,
    );
    const share = boundSeconds / seconds;
    console.log(
      `  share of bound: ${share.toFixed(3)} (target >= 0.8: ${target(share >= 0.8, `share of the rate-limit bound ${share.toFixed(3)} >= 0.8`)})`,
    );
    console.log(`  429 answers:    ${wiki.throttled()}`);
    const cores = cpu / seconds;
    console.log(
      `  CPU:            ${cpu.toFixed(1)} s, ${cores.toFixed(2)} cores on average (target < 1: ${target(cores < 1, `${cores.toFixed(2)} cores < 1`)})`,
    );
    console.log(
      `  check:          ${indexed} documents indexed of ${pageCount + attachmentCount}, ${statistics.failed_messages} failed messages`,
    );
    check(outcome === 'execution.completed', `the execution ended ${outcome}: ${JSON.stringify(statistics)}`);
    check(statistics.failed_messages === 0, `${statistics.failed_messages} messages failed`);
    check(
      indexed === pageCount + attachmentCount,
      `${indexed} documents indexed of ${pageCount} pages and ${attachmentCount} attachments`,
    );
  } finally {
    await orchestrator.stop();
    await vectorIndexes.whenIdle();
    await database.close();
    await wiki.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
finish();
