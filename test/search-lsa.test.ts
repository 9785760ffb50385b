/**
 * The corpus LSA in RRF search (issue 34, WEIR_SEARCH_LSA=on): a file-share ingestion of a
 * small corpus with three topics, where one page shares no word with the question "car" and
 * only LSA, through the words around it, can find it. The vectors are built on a worker after
 * the execution ends; until then, and after a write until the next build, RRF goes without the
 * list and says so. Rank 3 (the service's 200 would be the full rank of ten pages: plain tf-idf).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddersFromSettings } from '../src/embedding/embedders.js';
import { createLsaIndex } from '../src/search/lsa-index.js';
import { createSearchService, type SearchResponse } from '../src/search/search-service.js';
import { createKnowledgeIndex } from '../src/search-index/knowledge-index.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { vectorDatabaseTargets } from './helpers/databases.js';

const pages: Record<string, string> = {
  'p01.txt': 'Bake the bread in the oven; flour and yeast make the dough.',
  'p02.txt': 'Sow the seeds in garden soil and water them.',
  'p03.txt': 'The car has an engine, four wheels and a driver.',
  'p04.txt': 'Knead the dough of flour and water before you bake it.',
  'p05.txt': 'Plants grow from seeds when the soil has water.',
  'p06.txt': 'Park the car in the garage; the engine needs fuel.',
  'p07.txt': 'The oven bakes a cake of flour and sugar.',
  'p08.txt': 'Flowers in the garden need water and good soil.',
  'p09.txt': 'An automobile engine turns the wheels and burns fuel.',
  'p10.txt': 'The automobile waits in the garage until the driver checks its wheels.',
};
const vehicles = new Set(['p03.txt', 'p06.txt', 'p09.txt', 'p10.txt']);
const target = 'p10.txt';

const pipeline = (root: string) => `
name: lsa-pages
init_message:
  route: list
  payload:
    root: ${JSON.stringify(root)}
routes:
  - id: list
    adapters:
      - type: fileshare_enumerator
        config:
          extensions: [.txt]
        destination: documents
  - id: documents
    adapters:
      - type: fileshare_fetcher
      - type: document_converter
      - type: smart_segmenter
      - type: segment_publisher
        destination: embed
  - id: embed
    adapters:
      - type: embedding_generator
`;

interface Result {
  segment_id: string;
  source: { url: string | null };
  components: { ranking: string; rank: number | null }[];
}

const fileOf = (result: Result) => path.basename(new URL(result.source.url as string).pathname);
const rankIn = (result: Result, ranking: string) =>
  result.components.find((component) => component.ranking === ranking)?.rank ?? null;

const targets = (await vectorDatabaseTargets()).filter((t) => t.vectors);

describe.each(targets)('corpus LSA in RRF search on $name', (databaseTarget) => {
  let test: TestApp;
  let share: string;
  let configId: string;

  const search = async (type: string, query: string) => {
    const response = await test.app.inject({
      method: 'POST',
      url: `/api/v1/chat/search/${type}`,
      payload: { query, limit: 20 },
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as SearchResponse & { results: Result[] };
  };

  async function runPipeline() {
    const run = await test.app.inject({ method: 'POST', url: `/api/v1/configs/${configId}/run` });
    expect(run.statusCode, run.body).toBe(201);
    const waited = await test.app.inject({
      method: 'POST',
      url: `/api/v1/executions/${run.json().id}/wait`,
      payload: { timeout_seconds: 60 },
    });
    expect(waited.json()).toMatchObject({ completed: true, status: 'completed' });
  }

  /** RRF for `query` once the LSA list is in it (the build runs on a worker after the execution). */
  async function whenUsed(query: string) {
    for (let attempt = 0; attempt < 600; attempt++) {
      const body = await search('rrf', query);
      if (body.parameters.lsa_ranking === 'used') return body;
      expect(['building', 'stale']).toContain(body.parameters.lsa_ranking);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('the LSA vectors were never built');
  }

  beforeAll(async () => {
    share = await mkdtemp(path.join(tmpdir(), 'weir-lsa-'));
    for (const [name, text] of Object.entries(pages)) await writeFile(path.join(share, name), text);
    test = await createTestApp(databaseTarget, {
      settings: { fileshare_roots: [share], search_lsa: 'on' },
      // Only an execution's end may start a build here: the quiet period after a write is 10 minutes.
      lsaOptions: { rank: 3, debounceMs: 50, quietMs: 600_000 },
    });
    const created = await test.app.inject({
      method: 'POST',
      url: '/api/v1/configs',
      payload: { config_yaml: pipeline(share) },
    });
    expect(created.statusCode, created.body).toBe(201);
    configId = created.json().id;
  }, 90_000);

  afterAll(async () => {
    await test?.close();
    await rm(share, { recursive: true, force: true });
  });

  it('builds after an execution ends, and ranks a page keyword search cannot find', async () => {
    // Nothing indexed: the first search starts a build of nothing.
    const before = await search('rrf', 'car');
    expect(['building', 'empty']).toContain(before.parameters.lsa_ranking);
    await runPipeline();
    const fused = await whenUsed('car');
    expect(fused.parameters.weights).toMatchObject({ keyword: 1, lsa: 0.2 });

    const keyword = await search('keyword', 'car');
    expect(keyword.results.map(fileOf).sort()).toEqual(['p03.txt', 'p06.txt']);
    const found = fused.results.find((result) => fileOf(result) === target) as Result;
    expect(found, 'the page that never says "car"').toBeDefined();
    expect(rankIn(found, 'keyword')).toBeNull();
    // The four pages about vehicles are LSA's first four; the target above every other topic.
    const lsaFirst = fused.results
      .filter((result) => (rankIn(result, 'lsa') ?? 99) <= 4)
      .map(fileOf)
      .sort();
    expect(lsaFirst).toEqual([...vehicles].sort());
    for (const result of fused.results.filter((r) => !vehicles.has(fileOf(r))))
      expect(rankIn(result, 'lsa') ?? 99).toBeGreaterThan(rankIn(found, 'lsa') as number);
  }, 120_000);

  it('goes without the list while the index has changed since the vectors, until the next build', async () => {
    await whenUsed('car');
    // A write outside any execution makes the vectors stale at once (the quiet period is 10 minutes).
    await createKnowledgeIndex(test.database.db).indexDocuments([
      {
        document: {
          sourceKey: 'http://127.0.0.1/p11.txt',
          url: 'http://127.0.0.1/p11.txt',
          title: 'Another car',
          language: 'english',
          executionId: 'by-hand',
        },
        segments: [
          {
            segmentIndex: 0,
            text: 'A second car with a new engine waits for its driver.',
            tokenCount: 11,
            headingPath: [],
          },
        ],
      },
    ]);
    const stale = await search('rrf', 'car');
    expect(stale.parameters.lsa_ranking).toBe('stale');
    expect(stale.results.every((result) => rankIn(result, 'lsa') === null)).toBe(true);
    // Any execution's end rebuilds them, now with the new page.
    await runPipeline();
    const after = await whenUsed('car');
    const rebuilt = after.results.find((result) => fileOf(result) === 'p11.txt') as Result;
    expect(rankIn(rebuilt, 'lsa')).not.toBeNull();
  }, 120_000);

  it('gives the same ranking from two builds of the same contents; off, the statement has no LSA', async () => {
    await sameRankingAndOff(test);
  }, 120_000);
});

/**
 * Two builds over the same contents rank alike; with the setting off a search has no LSA
 * parameter or component, and ranks as an index whose vectors are not built yet; a build
 * stopped by closing the index says nothing.
 */
async function sameRankingAndOff(test: TestApp) {
  const db = test.database.db;
  const embedders = createEmbeddersFromSettings(test.settings.embedding_models);
  const first = createLsaIndex(db, undefined, { rank: 3 });
  const second = createLsaIndex(db, undefined, { rank: 3 });
  await Promise.all([first.ready(), second.ready()]);
  const withLsa = (lsa: typeof first) => createSearchService({ db, embedders, lsa });
  const a = await withLsa(first).search('rrf', { query: 'engine for a car', limit: 20 });
  const b = await withLsa(second).search('rrf', { query: 'engine for a car', limit: 20 });
  expect(a.parameters.lsa_ranking).toBe('used');
  expect(a.results.map((r) => [r.segment_id, r.score])).toEqual(
    b.results.map((r) => [r.segment_id, r.score]),
  );

  // Off: no parameter, two components, and the ranking of an index whose vectors do not exist yet.
  const off = await createSearchService({ db, embedders }).search('rrf', {
    query: 'engine for a car',
    limit: 20,
  });
  expect(off.parameters).not.toHaveProperty('lsa_ranking');
  expect(off.results.every((r) => r.components.map((c) => c.ranking).join() === 'keyword,vector')).toBe(true);
  const unbuilt = createLsaIndex(db, undefined, { rank: 3 });
  const waiting = await withLsa(unbuilt).search('rrf', { query: 'engine for a car', limit: 20 });
  expect(waiting.parameters.lsa_ranking).toBe('building');
  expect(waiting.results.map((r) => [r.segment_id, r.score])).toEqual(
    off.results.map((r) => [r.segment_id, r.score]),
  );
  expect(a.results.map((r) => r.segment_id)).not.toEqual(off.results.map((r) => r.segment_id));
  for (const index of [first, second, unbuilt]) {
    await index.ready();
    index.close();
  }
  // Closed while building: the build stops, quietly.
  const errors: unknown[] = [];
  const closing = createLsaIndex(db, undefined, { rank: 3, onError: (error) => errors.push(error) });
  expect(closing.prepare()).toBe('building');
  closing.close();
  await closing.ready();
  expect(errors).toEqual([]);
  expect(closing.lastBuild()).toBeUndefined();
}
