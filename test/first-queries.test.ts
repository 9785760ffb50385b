/**
 * Issue 35: the first queries after a start all answer. `weir serve` runs on the embedded
 * defaults with the example pipelines (weir-docs indexes README.md and docs/*.md); once that
 * has run, the service is started again on the same data dir and 50 keyword searches are
 * fired together the moment health answers, while the word vectors and the language tables
 * may still be loading. Every one must answer 200 within a generous bound (correctness, not
 * timing) and rank as the same query does once everything is loaded: a query that came
 * early waited for the word vectors instead of being answered without expansion.
 *
 * The child gets a temporary directory of its own, so no word vectors another process cached
 * there make the start warmer than a fresh machine's.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startWeirProcess, type WeirProcess } from './helpers/weir-process.js';

const CLIENTS = 50;
/** Generous: a cold start converts 307 MB of word vectors when no build left them ready. */
const ANSWER_BOUND_MS = 60_000;
const queries = [
  'how do I run the service on a PostgreSQL server',
  'what happens when a webhook delivery fails',
  'how are pipelines configured',
  'where are the stored documents kept',
  'how do I rotate the API keys',
];

interface KeywordAnswer {
  results: { segment_id: string }[];
  parameters: { query_expansions?: unknown[] };
}

async function keywordSearch(base: string, query: string): Promise<{ status: number; body?: KeywordAnswer }> {
  const response = await fetch(`${base}/api/v1/chat/search/keyword`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
    signal: AbortSignal.timeout(ANSWER_BOUND_MS),
  });
  return {
    status: response.status,
    body: response.ok ? ((await response.json()) as KeywordAnswer) : undefined,
  };
}

async function stopGracefully(service: WeirProcess): Promise<void> {
  const exited = new Promise((resolve) => service.child.once('exit', resolve));
  service.child.kill('SIGTERM');
  await exited;
}

/** Waits until the example pipelines' executions have all ended (weir-docs has indexed). */
async function untilExamplesRan(base: string): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    const body = (await (await fetch(`${base}/api/v1/executions?limit=100`)).json()) as {
      executions: { status: string }[];
    };
    if (body.executions.length > 0 && body.executions.every((execution) => execution.status !== 'running'))
      return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error('the example pipelines did not end within 300 s');
}

describe('the first queries after a start', () => {
  let dataDir: string | undefined;
  let service: WeirProcess | undefined;
  afterAll(async () => {
    await service?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it(`${CLIENTS} concurrent keyword searches fired as health first answers all answer 200, ranked as when warm`, async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'weir-first-queries-'));
    const childTmp = path.join(dataDir, 'tmp');
    await mkdir(childTmp);
    const environment = { TMPDIR: childTmp };
    service = await startWeirProcess(environment, { dataDir });
    await untilExamplesRan(service.base);
    await stopGracefully(service);

    service = await startWeirProcess(environment, { dataDir });
    const base = service.base;
    const first = await Promise.all(
      Array.from({ length: CLIENTS }, (_, client) => {
        const query = queries[client % queries.length] as string;
        return keywordSearch(base, query).then(
          (answer) => ({ query, ...answer }),
          (error: Error) => ({ query, status: 0, body: undefined, error: error.message }),
        );
      }),
    );
    expect(first.map((answer) => answer.status)).toEqual(Array(CLIENTS).fill(200));

    // Warm now: the same queries again, one at a time. An early query ranked the same way.
    for (const query of queries) {
      const warm = await keywordSearch(base, query);
      expect(warm.body?.results.length).toBeGreaterThan(0);
      for (const early of first.filter((answer) => answer.query === query)) {
        expect(early.body?.parameters.query_expansions).toEqual(warm.body?.parameters.query_expansions);
        expect(early.body?.results.map((result) => result.segment_id)).toEqual(
          warm.body?.results.map((result) => result.segment_id),
        );
      }
    }
  }, 420_000);
});
