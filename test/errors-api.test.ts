import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuiltinRegistry } from '../src/adapters/builtin.js';
import { buildApp } from '../src/app.js';
import { AppError } from '../src/errors.js';
import { loadSettings } from '../src/settings.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { databaseTargets } from './helpers/databases.js';

describe('error bodies', () => {
  let app: Awaited<ReturnType<typeof buildApp>>;
  beforeAll(async () => {
    app = await buildApp({
      settings: loadSettings({ WEIR_BODY_LIMIT: '2048' }),
      registry: createBuiltinRegistry(),
    });
    app.get('/boom', async () => {
      throw new Error('secret internal detail');
    });
    app.get('/app-error', async () => {
      throw new AppError('orchestrator_unavailable', 'the orchestrator is not running');
    });
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers an unknown endpoint with 404 and a detail', async () => {
    const response = await app.inject({ url: '/api/v1/nothing-here' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ detail: 'no endpoint GET /api/v1/nothing-here', code: 'not_found' });
  });

  it('echoes only an excerpt of a long unknown path', async () => {
    const path = `/api/v1/${'x'.repeat(20_000)}`;
    const response = await app.inject({ url: path });
    expect(response.statusCode).toBe(404);
    expect(response.body.length).toBeLessThan(500);
    expect(response.json().detail).toMatch(/^no endpoint GET \/api\/v1\/x+… \(19808 more characters\)$/);
  });

  it('answers malformed JSON with a 422 json_invalid entry', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/adapters/synthetic_sink/validate',
      headers: { 'content-type': 'application/json' },
      payload: '{"config": ',
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().detail[0]).toMatchObject({ loc: ['body'], type: 'json_invalid' });
  });

  it('answers a media type it cannot parse with 415', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/adapters/synthetic_sink/validate',
      headers: { 'content-type': 'application/xml' },
      payload: '<config/>',
    });
    expect(response.statusCode).toBe(415);
    expect(response.json()).toMatchObject({ code: 'unsupported_media_type' });
  });

  it('answers a plain-text body where an object is expected with 422', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/adapters/synthetic_sink/validate',
      headers: { 'content-type': 'text/plain' },
      payload: 'config',
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().detail[0]).toMatchObject({ loc: ['body'], type: 'dict_type', input: 'config' });
  });

  it('answers an oversized body with 413', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/adapters/synthetic_sink/validate',
      payload: { config: { padding: 'x'.repeat(4096) } },
    });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toMatchObject({ code: 'payload_too_large' });
  });

  it('hides the message and stack of an unexpected error', async () => {
    const response = await app.inject({ url: '/boom' });
    expect(response.statusCode).toBe(500);
    expect(response.json()).toEqual({ detail: 'Internal Server Error', code: 'internal_error' });
    expect(response.body).not.toContain('secret');
    expect(response.body).not.toContain('at ');
  });

  it('maps an AppError to its catalogue status', async () => {
    const response = await app.inject({ url: '/app-error' });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({
      detail: 'the orchestrator is not running',
      code: 'orchestrator_unavailable',
    });
  });
});

describe.each(databaseTargets())('hostile input on $name (issue 17 item 5)', (target) => {
  let test: TestApp;
  beforeAll(async () => {
    test = await createTestApp(target);
  });
  afterAll(async () => {
    await test?.close();
  });
  const post = (url: string, payload: string | object) =>
    test.app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json' },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });

  it('answers JSON nested 5,000 deep with a 422 json_invalid naming the bound', async () => {
    for (const payload of [
      '['.repeat(5000) + ']'.repeat(5000),
      `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`,
    ]) {
      const response = await post('/api/v1/chat/search/keyword', payload);
      expect(response.statusCode).toBe(422);
      expect(response.json().detail[0]).toMatchObject({ loc: ['body'], type: 'json_invalid' });
      expect(response.json().detail[0].ctx.error).toContain('at most 64');
    }
  });

  it('refuses a run body nested past the bound, and takes one at a sane depth', async () => {
    const config = await post('/api/v1/configs', {
      config_yaml: 'routes:\n  - id: a\n    adapters: [{ type: synthetic_sink }]\n',
    });
    const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    const deep = await post(`/api/v1/configs/${config.json().id}/run`, nested(101));
    expect(deep.statusCode).toBe(422);
    const fine = await post(`/api/v1/configs/${config.json().id}/run`, nested(10));
    expect(fine.statusCode).toBe(201);
  });

  it('refuses NUL characters in names, queries and query parameters with a 422 naming the field', async () => {
    const cases: Array<[Promise<{ statusCode: number; json: () => { detail: unknown } }>, unknown[]]> = [
      [post('/api/v1/configs', { name: 'a\u0000b', config_yaml: 'routes: []' }), ['body', 'name']],
      [post('/api/v1/chat/search/keyword', { query: 'vacuum\u0000' }), ['body', 'query']],
      [post('/api/v1/chat/templates', { name: 't', description: '\u0000' }), ['body', 'description']],
      [test.app.inject({ url: '/api/v1/chat/sources?embedding_model=a%00b' }), ['query', 'embedding_model']],
      [test.app.inject({ url: '/api/v1/executions?tag=%00' }), ['query', 'tag']],
    ];
    for (const [pending, loc] of cases) {
      const response = await pending;
      expect(response.statusCode, JSON.stringify(loc)).toBe(422);
      expect(response.json().detail).toEqual([
        expect.objectContaining({ loc, type: 'string_nul', msg: 'String should not contain NUL characters' }),
      ]);
    }
  });

  it('refuses integers past 32 bits and a 1 MB owner_id with 422', async () => {
    for (const url of [
      '/api/v1/configs?offset=9223372036854775807',
      '/api/v1/executions?limit=1&offset=2147483648',
      '/api/v1/chat/sources?min_segments=1e40',
      `/api/v1/chat/templates?owner_id=${'x'.repeat(1_000_000)}`,
    ]) {
      const response = await test.app.inject({ url });
      expect(response.statusCode, url.slice(0, 80)).toBe(422);
      expect(response.rawPayload.byteLength).toBeLessThan(2_000);
    }
    const owner = await post('/api/v1/chat/templates', { name: 't', owner_id: 'x'.repeat(1_000_000) });
    expect(owner.statusCode).toBe(422);
  });

  it('bounds offset and limit on /pipelines, /chat/sources and /replay/routes as on the other lists (issue 30)', async () => {
    for (const list of ['/api/v1/pipelines', '/api/v1/chat/sources', '/api/v1/replay/routes']) {
      for (const query of [
        'offset=9223372036854775807',
        'offset=-1',
        'limit=0',
        'limit=1001',
        'limit=1e40',
      ]) {
        const response = await test.app.inject({ url: `${list}?${query}` });
        expect(response.statusCode, `${list}?${query}`).toBe(422);
        expect(response.json().detail[0].loc).toEqual(['query', query.split('=')[0]]);
      }
      const page = await test.app.inject({ url: `${list}?offset=5&limit=1` });
      expect(page.statusCode, list).toBe(200);
    }
    // A page of a list the service holds whole: total counts all, the page holds limit.
    for (const id of ['first', 'second']) {
      await post('/api/v1/configs', {
        config_yaml: `routes:\n  - id: ${id}\n    adapters: [{ type: synthetic_sink }]\n`,
      });
    }
    const all = (await test.app.inject({ url: '/api/v1/replay/routes' })).json();
    expect(all.total).toBeGreaterThanOrEqual(2);
    const second = (await test.app.inject({ url: '/api/v1/replay/routes?offset=1&limit=1' })).json();
    expect(second).toEqual({ routes: [all.routes[1]], total: all.total });
  });

  it('refuses a 1 MB LLM profile or model in a template (issue 30)', async () => {
    for (const llm of [{ profile: 'x'.repeat(1_000_000) }, { model: 'x'.repeat(1_000_000) }]) {
      const response = await post('/api/v1/chat/templates', { name: 't', llm });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ code: 'template_invalid' });
      expect(response.rawPayload.byteLength).toBeLessThan(3_000);
    }
    const listed = await test.app.inject({ url: '/api/v1/chat/templates' });
    expect(listed.json().total).toBe(0);
  });

  it('never echoes a 100 KB language, embedding model or profile in full (issue 30)', async () => {
    const huge = 'x'.repeat(100_000);
    const cases: Array<[string, object]> = [
      ['/api/v1/chat/search/keyword', { query: 'vacuum', language: huge }],
      ['/api/v1/chat/search/vector', { query: 'vacuum', embedding_model: huge }],
      ['/api/v1/chat/search/rrf', { query: 'vacuum', embedding_model: huge }],
      ['/api/v1/chat/complete', { query: 'vacuum', configuration: { language: huge } }],
      ['/api/v1/chat/complete', { query: 'vacuum', configuration: { embedding_model: huge } }],
      ['/api/v1/chat/complete', { query: 'vacuum', configuration: { llm_profile: huge } }],
      ['/api/v1/chat/templates', { name: 't', rag: { language: huge } }],
      ['/api/v1/chat/templates', { name: 't', llm: { profile: huge } }],
    ];
    for (const [url, body] of cases) {
      const response = await post(url, body);
      const name = `${url} ${Object.keys(body).join(',')}`;
      expect(response.statusCode, name).toBeGreaterThanOrEqual(400);
      expect(response.statusCode, name).toBeLessThan(500);
      expect(response.rawPayload.byteLength, name).toBeLessThan(3_000);
    }
  });

  it('echoes a bounded excerpt of what was sent, not the body after defaults', async () => {
    const huge = 'x'.repeat(9_000_000);
    const response = await post('/api/v1/chat/search/keyword', { query: 'vacuum', limit: huge });
    expect(response.statusCode).toBe(422);
    expect(response.rawPayload.byteLength).toBeLessThan(2_000);
    expect(response.json().detail[0].input).toMatch(/^x{200}… \(8999800 more characters\)$/);
    // `limit` and `match` have defaults; the error about the missing query shows only what came.
    const missing = await post('/api/v1/chat/search/keyword', { surprise: 1 });
    expect(missing.statusCode).toBe(422);
    const entry = missing.json().detail.find((item: { type: string }) => item.type === 'missing');
    expect(entry.input).toEqual({ surprise: 1 });
  });

  it('answers a path segment over the router limit with 414 and a bad percent-encoding with 400, in the catalogue shape', async () => {
    const long = await test.app.inject({ url: `/api/v1/executions/${'x'.repeat(500)}` });
    expect(long.statusCode).toBe(414);
    expect(long.json()).toEqual({ detail: expect.any(String), code: 'uri_too_long' });
    const bad = await test.app.inject({ url: '/api/v1/configs/%E0%A4%A' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ detail: 'the URL holds a bad percent-encoding', code: 'url_invalid' });
  });

  it('refuses a storage key segment too long for a file name, without naming server paths', async () => {
    const response = await test.app.inject({ url: `/api/v1/storage/objects/a/${'y'.repeat(300)}` });
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe('storage_key_invalid');
    expect(response.body).not.toContain('/tmp/');
  });
});
