/**
 * A source deleted at its origin: the file is gone from the share, but the object an earlier
 * run stored stays in storage and in the manifest. knowledge_diff reported it unchanged (or
 * changed), so its concepts and pages kept citing a deleted file.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Value } from 'typebox/value';
import { afterAll, describe, expect, it } from 'vitest';
import { conceptMapFormat } from '../../consolidation/concept-map.js';
import { collectOutputs, createAdapterTestKit, memorySyncState } from '../adapter-testing.js';
import { knowledgeDiff } from './knowledge-diff.js';

const share = await mkdtemp(path.join(tmpdir(), 'weir-kdiff-share-'));
const kit = await createAdapterTestKit({
  settings: { fileshare_roots: [share], fetch_allowed_cidrs: ['127.0.0.0/8'] },
});

/** A site on 127.0.0.1: each path answers the status given, and it logs what was asked. */
const statuses: Record<string, number> = {};
const bodies: Record<string, string> = {};
const asked: string[] = [];
const site = http.createServer((request, response) => {
  asked.push(request.url ?? '');
  const status = statuses[request.url ?? ''] ?? 404;
  response.writeHead(status, {
    'content-type': request.url?.endsWith('.xml') ? 'application/xml' : 'text/html',
  });
  response.end(bodies[request.url ?? ''] ?? `<html><body>${status}</body></html>`);
});
await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
const siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;

afterAll(async () => {
  await kit.close();
  await new Promise((resolve) => site.close(resolve));
  await rm(share, { recursive: true, force: true });
});

const configOf = (given: Record<string, unknown>) =>
  Value.Default(knowledgeDiff.config, structuredClone(given)) as Parameters<typeof knowledgeDiff.create>[0];

/** A concept map (version 1) that knows `ids`, registered as the knowledge base's current one. */
async function previousMap(name: string, entries: ReturnType<typeof httpEntry>[]) {
  const mapKey = (
    await kit.storage.put(
      `run1-${name}/concept_map_updater/concept-map.json`,
      JSON.stringify({
        format: conceptMapFormat,
        name,
        version: 1,
        created_at: 'x',
        sources: Object.fromEntries(entries.map((entry) => [entry.source_id, { ...entry, detected: [] }])),
        concepts: {},
        stale: [],
        removed: [],
      }),
    )
  ).key;
  const syncState = memorySyncState();
  await syncState.put(`concept-map ${name}`, [{ key: 'v00000001', value: { map_key: mapKey, version: 1 } }]);
  const manifestKey = (
    await kit.storage.put(
      `run2-${name}/storage_enumerator/manifest.json`,
      JSON.stringify({ objects: entries }),
    )
  ).key;
  return { syncState, manifestKey };
}

const httpEntry = (page: string) => ({
  source_id: `${siteUrl}${page}`,
  key: `run1/page_fetcher/${page.replace(/\W+/g, '-')}.html`,
  content_hash: `hash-${page}`,
  title: page,
  url: `${siteUrl}${page}`,
  created_at: '2026-11-25T00:00:00Z',
});

describe('knowledge_diff', () => {
  it('reports a share file deleted at its origin as removed, though its stored object is still listed', async () => {
    await mkdir(path.join(share, 'bees'));
    const files = ['varroa.md', 'brood-box.md'].map((name) => path.join(share, 'bees', name));
    for (const file of files) await writeFile(file, '# page\n');
    const entry = (file: string, run: string) => ({
      source_id: pathToFileURL(file).href,
      key: `${run}/fileshare_fetcher/${path.basename(file)}`,
      content_hash: `hash-${path.basename(file)}`,
      title: path.basename(file),
      url: pathToFileURL(file).href,
      created_at: '2026-11-25T00:00:00Z',
    });
    const sources = Object.fromEntries(
      files.map((file) => [pathToFileURL(file).href, { ...entry(file, 'run1'), detected: [] }]),
    );
    const mapKey = (
      await kit.storage.put(
        'run1/concept_map_updater/concept-map.json',
        JSON.stringify({
          format: conceptMapFormat,
          name: 'bees',
          version: 1,
          created_at: 'x',
          sources,
          concepts: {},
          stale: [],
          removed: [],
        }),
      )
    ).key;
    const syncState = memorySyncState();
    await syncState.put('concept-map bees', [{ key: 'v00000001', value: { map_key: mapKey, version: 1 } }]);
    // The second run: the brood box page was deleted from the share; run 1's objects remain listed.
    await rm(files[1] as string);
    const manifestKey = (
      await kit.storage.put(
        'run2/storage_enumerator/manifest.json',
        JSON.stringify({ objects: files.map((file) => entry(file, 'run1')) }),
      )
    ).key;
    const handler = knowledgeDiff.create(configOf({ knowledge_base: 'bees' }), kit.resources);
    const [output] = await collectOutputs(
      await handler({ manifest_key: manifestKey }, kit.context({ syncState })),
    );
    expect(output?.payload).toMatchObject({ added: 0, changed: 0, removed: 1, unchanged: 1 });
    const diff = JSON.parse((await kit.storage.get(output?.payload.diff_key as string)).toString('utf8'));
    expect(diff.removed).toEqual([pathToFileURL(files[1] as string).href]);
  });

  it('reports a crawled page answering 404 or 410 as removed, and keeps one answering 200, 401 or 503', async () => {
    Object.assign(statuses, {
      '/bees/varroa': 200,
      '/bees/brood-box': 404,
      '/bees/old-super': 410,
      '/bees/flaky': 503,
      '/bees/login': 401,
    });
    const pages = ['/bees/varroa', '/bees/brood-box', '/bees/old-super', '/bees/flaky', '/bees/login'];
    const entries = pages.map(httpEntry);
    const { syncState, manifestKey } = await previousMap('crawled', entries);
    const handler = knowledgeDiff.create(
      configOf({ knowledge_base: 'crawled', max_retries: 0, rate_limit: 1000 }),
      kit.resources,
    );
    const [output] = await collectOutputs(
      await handler({ manifest_key: manifestKey }, kit.context({ syncState })),
    );
    expect(output?.payload).toMatchObject({ removed: 2, unchanged: 3 });
    const diff = JSON.parse((await kit.storage.get(output?.payload.diff_key as string)).toString('utf8'));
    expect(diff.removed).toEqual([`${siteUrl}/bees/brood-box`, `${siteUrl}/bees/old-super`].sort());
    expect(diff.http_origins).toEqual({ requests: 5, unread_sitemaps: [] });
  });

  it("removes what the origin's sitemap no longer lists, without asking for the page; an unreadable sitemap decides nothing", async () => {
    Object.assign(statuses, { '/shop/sitemap.xml': 200, '/shop/a': 200, '/shop/b': 200, '/broken.xml': 500 });
    bodies['/shop/sitemap.xml'] =
      '<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' +
      `<url><loc>${siteUrl}/shop/a</loc></url></urlset>`;
    const entries = ['/shop/a', '/shop/b'].map(httpEntry);
    const { syncState, manifestKey } = await previousMap('mapped', entries);
    const run = async (sitemaps: string[]) => {
      asked.length = 0;
      const handler = knowledgeDiff.create(
        configOf({ knowledge_base: 'mapped', origin_sitemaps: sitemaps, max_retries: 0, rate_limit: 1000 }),
        kit.resources,
      );
      const [output] = await collectOutputs(
        await handler({ manifest_key: manifestKey }, kit.context({ syncState })),
      );
      return JSON.parse((await kit.storage.get(output?.payload.diff_key as string)).toString('utf8'));
    };
    const listed = await run([`${siteUrl}/shop/sitemap.xml`]);
    expect(listed.removed).toEqual([`${siteUrl}/shop/b`]);
    expect(asked.filter((url) => url.startsWith('/shop/') && !url.endsWith('.xml'))).toEqual([]);
    // The sitemap cannot be read: both pages are asked for, and both answer 200.
    const unread = await run([`${siteUrl}/broken.xml`]);
    expect(unread.removed).toEqual([]);
    expect(unread.http_origins.unread_sitemaps).toEqual([`${siteUrl}/broken.xml`]);
    expect(asked).toEqual(expect.arrayContaining(['/shop/a', '/shop/b']));
  });
});
