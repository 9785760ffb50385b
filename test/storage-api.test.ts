import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuiltinRegistry } from '../src/adapters/builtin.js';
import { buildApp } from '../src/app.js';
import { loadSettings } from '../src/settings.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { databaseTargets } from './helpers/databases.js';

describe.each(databaseTargets())('storage API on $name', (target) => {
  let test: TestApp;
  let executionId: string;
  beforeAll(async () => {
    test = await createTestApp(target);
    const config = (
      await test.app.inject({
        method: 'POST',
        url: '/api/v1/configs',
        payload: { config_yaml: 'routes:\n  - id: r\n    adapters: [{ type: synthetic_sink }]\n' },
      })
    ).json();
    executionId = (
      await test.app.inject({ method: 'POST', url: `/api/v1/configs/${config.id}/run?tag=storage` })
    ).json().id;
    // The listing with execution info expects it finished; on a loaded machine it may not be yet.
    const waited = await test.app.inject({
      method: 'POST',
      url: `/api/v1/executions/${executionId}/wait`,
      payload: { timeout_seconds: 60 },
    });
    expect(waited.json().status).toBe('completed');
    const put = (
      key: string,
      body: string,
      metadata: Record<string, unknown>,
      contentType = 'text/markdown',
    ) => test.storage.put(key, body, { contentType, metadata });
    await put(`${executionId}/html_to_markdown/a.md`, '# A', {
      execution_id: executionId,
      stage: 'html_to_markdown',
      route_id: 'web',
      correlation_id: 'c1',
    });
    await put(`${executionId}/html_to_markdown/b.md`, '# B', {
      execution_id: executionId,
      stage: 'html_to_markdown',
      route_id: 'web',
      correlation_id: 'c2',
    });
    await put(
      `${executionId}/web_scraper/page.html`,
      '<p>hello world</p>',
      { execution_id: executionId, stage: 'web_scraper', route_id: 'web', correlation_id: 'c1' },
      'text/html',
    );
    await put(
      `${executionId}/segments/x.json`,
      '{"a":1}',
      { execution_id: executionId, stage: 'segments', route_id: 'index', correlation_id: 'c3' },
      'application/json',
    );
    await put('loose/readme.txt', 'loose file', {}, 'text/plain');
  });
  afterAll(async () => {
    await test?.close();
  });
  const list = async (query: string) =>
    (await test.app.inject({ url: `/api/v1/storage/objects?${query}` })).json();

  it('lists every object sorted with metadata, total and paging', async () => {
    const all = await list('');
    expect(all.total).toBe(5);
    expect(all.objects.map((object: { key: string }) => object.key)).toEqual([
      `${executionId}/html_to_markdown/a.md`,
      `${executionId}/html_to_markdown/b.md`,
      `${executionId}/segments/x.json`,
      `${executionId}/web_scraper/page.html`,
      'loose/readme.txt',
    ]);
    expect(all.objects[0]).toMatchObject({
      size: 3,
      content_type: 'text/markdown',
      metadata: { stage: 'html_to_markdown' },
    });
    expect(all.objects[0].sha256).toMatch(/^[0-9a-f]{64}$/);
    expect((await list('include_metadata=false')).objects[0]).not.toHaveProperty('metadata');
    const page = await list('limit=2&offset=2');
    expect(page).toMatchObject({ total: 5, limit: 2, offset: 2 });
    expect(page.objects.map((object: { key: string }) => object.key)).toEqual([
      `${executionId}/segments/x.json`,
      `${executionId}/web_scraper/page.html`,
    ]);
  });

  it('filters by metadata, prefix and comma-separated extensions', async () => {
    expect((await list('correlation_id=c1')).total).toBe(2);
    expect((await list('stage=html_to_markdown')).total).toBe(2);
    expect((await list('route_id=index')).total).toBe(1);
    expect((await list('extension=.md,json')).total).toBe(3);
    expect((await list('extension=.html&correlation_id=c1')).total).toBe(1);
    expect((await list(`prefix=${executionId}/web`)).total).toBe(1);
    expect((await list('prefix=loose_')).total).toBe(0); // _ is not a wildcard
  });

  it('groups folders with a delimiter and names execution prefixes', async () => {
    const top = await list('delimiter=/');
    expect(top.objects).toEqual([]);
    expect(top.common_prefixes).toEqual([`${executionId}/`, 'loose/']);
    const stages = await list(`delimiter=/&prefix=${executionId}/`);
    expect(stages.common_prefixes).toEqual([
      `${executionId}/html_to_markdown/`,
      `${executionId}/segments/`,
      `${executionId}/web_scraper/`,
    ]);
    expect(stages.execution_prefixes).toEqual([{ prefix: `${executionId}/`, execution_id: executionId }]);
    const withInfo = await list('include_execution_info=true');
    expect(withInfo.execution_prefixes[0].execution).toMatchObject({ status: 'completed', tag: 'storage' });
  });

  it('answers 422 for bad limits and 400 for a hostile prefix', async () => {
    for (const query of ['limit=0', 'limit=1001', 'offset=-1', 'include_metadata=maybe']) {
      expect((await test.app.inject({ url: `/api/v1/storage/objects?${query}` })).statusCode).toBe(422);
    }
    const hostile = await test.app.inject({ url: '/api/v1/storage/objects?prefix=../etc' });
    expect(hostile.statusCode).toBe(400);
    expect(hostile.json()).toMatchObject({ code: 'storage_key_invalid' });
  });

  it('serves metadata, content, byte ranges and 404s', async () => {
    const key = `${executionId}/web_scraper/page.html`;
    const metadata = await test.app.inject({ url: `/api/v1/storage/objects/${key}/metadata` });
    expect(metadata.statusCode).toBe(200);
    expect(metadata.json()).toMatchObject({
      key,
      size: 18,
      content_type: 'text/html',
      metadata: { correlation_id: 'c1' },
    });
    const content = await test.app.inject({ url: `/api/v1/storage/objects/${key}` });
    expect(content.statusCode).toBe(200);
    expect(content.body).toBe('<p>hello world</p>');
    expect(content.headers['content-type']).toMatch(/^text\/html/);
    expect(content.headers['accept-ranges']).toBe('bytes');
    const range = await test.app.inject({
      url: `/api/v1/storage/objects/${key}`,
      headers: { range: 'bytes=3-7' },
    });
    expect(range.statusCode).toBe(206);
    expect(range.body).toBe('hello');
    expect(range.headers['content-range']).toBe('bytes 3-7/18');
    const suffix = await test.app.inject({
      url: `/api/v1/storage/objects/${key}`,
      headers: { range: 'bytes=-4' },
    });
    expect(suffix.body).toBe('</p>');
    const unsatisfiable = await test.app.inject({
      url: `/api/v1/storage/objects/${key}`,
      headers: { range: 'bytes=100-' },
    });
    expect(unsatisfiable.statusCode).toBe(416);
    expect((await test.app.inject({ url: '/api/v1/storage/objects/nope/missing.md' })).statusCode).toBe(404);
    expect(
      (await test.app.inject({ url: '/api/v1/storage/objects/nope/missing.md/metadata' })).statusCode,
    ).toBe(404);
    const traversal = await test.app.inject({ url: '/api/v1/storage/objects/a/..%2F..%2Fetc%2Fpasswd' });
    expect(traversal.statusCode).toBe(400);
  });

  it('browses folders and files, with 404 for an unknown path', async () => {
    const root = (await test.app.inject({ url: '/api/v1/storage/browse' })).json();
    expect(root).toMatchObject({ path: '', parent: null, files: [] });
    expect(root.directories.map((folder: { name: string }) => folder.name)).toEqual([executionId, 'loose']);
    const stage = (
      await test.app.inject({ url: `/api/v1/storage/browse?path=${executionId}/html_to_markdown` })
    ).json();
    expect(stage).toMatchObject({
      path: `${executionId}/html_to_markdown`,
      parent: executionId,
      directories: [],
    });
    expect(stage.files.map((file: { name: string }) => file.name)).toEqual(['a.md', 'b.md']);
    expect((await test.app.inject({ url: '/api/v1/storage/browse?path=nowhere' })).statusCode).toBe(404);
  });
});

describe('storage API without storage', () => {
  it('answers 503', async () => {
    const app = await buildApp({ settings: loadSettings({}), registry: createBuiltinRegistry() });
    for (const url of ['/api/v1/storage/objects', '/api/v1/storage/objects/a/b', '/api/v1/storage/browse']) {
      const response = await app.inject({ url });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toMatchObject({ code: 'storage_unavailable' });
    }
    await app.close();
  });
});
