import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuiltinRegistry } from '../src/adapters/builtin.js';
import { buildApp } from '../src/app.js';
import { loadSettings } from '../src/settings.js';
import { SERVICE_VERSION } from '../src/version.js';

describe('API keys', () => {
  let app: Awaited<ReturnType<typeof buildApp>>;
  beforeAll(async () => {
    app = await buildApp({
      settings: loadSettings({ WEIR_API_KEYS: 'first-key, second-key' }),
      registry: createBuiltinRegistry(),
    });
  });
  afterAll(async () => {
    await app.close();
  });

  it.each([
    '/api/v1/adapters',
    '/openapi.json',
    '/api/v1/system/config',
    '/api/v1/no-such-endpoint',
  ])('refuses %s without a key (401, WWW-Authenticate)', async (url) => {
    const response = await app.inject({ url });
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Bearer');
    expect(response.json()).toMatchObject({ code: 'unauthorized' });
  });

  it.each([
    'Bearer wrong-key',
    'Bearer first-key-and-more',
    'Basic Zmlyc3Qta2V5',
    'first-key',
    'Bearer ',
  ])('refuses the header %j', async (authorization) => {
    const response = await app.inject({ url: '/api/v1/adapters', headers: { authorization } });
    expect(response.statusCode).toBe(401);
  });

  it('accepts every configured key', async () => {
    for (const key of ['first-key', 'second-key']) {
      const response = await app.inject({
        url: '/api/v1/adapters',
        headers: { authorization: `Bearer ${key}` },
      });
      expect(response.statusCode).toBe(200);
    }
  });

  it('leaves health and version open', async () => {
    expect((await app.inject({ url: '/api/v1/system/health' })).statusCode).toBe(200);
    expect((await app.inject({ url: '/api/v1/system/version' })).statusCode).toBe(200);
  });

  it("answers health's debug details only with a key (issue 30)", async () => {
    for (const authorization of [undefined, 'Bearer wrong-key']) {
      const response = await app.inject({
        url: '/api/v1/system/health?debug=true',
        headers: authorization ? { authorization } : {},
      });
      expect(response.statusCode, authorization).toBe(401);
      expect(response.headers['www-authenticate']).toBe('Bearer');
      expect(response.json()).toMatchObject({ code: 'unauthorized' });
    }
    const open = (await app.inject({ url: '/api/v1/system/health?debug=false' })).json();
    expect(JSON.stringify(open)).not.toMatch(/connection|error/);
    const detailed = await app.inject({
      url: '/api/v1/system/health?debug=true',
      headers: { authorization: 'Bearer second-key' },
    });
    expect(detailed.statusCode).toBe(200);
    expect(detailed.json().components).toHaveProperty('database');
  });

  it('names only the service version without a key, every component with one', async () => {
    const open = (await app.inject({ url: '/api/v1/system/version' })).json();
    expect(Object.keys(open).sort()).toEqual(['api_version', 'service']);
    expect(JSON.stringify(open)).not.toContain(process.versions.node);
    // Only major.minor of the service: enough to tell releases apart, not to name a patch level.
    expect(open.service.version).toBe(SERVICE_VERSION.split('.').slice(0, 2).join('.'));
    const wrong = await app.inject({
      url: '/api/v1/system/version',
      headers: { authorization: 'Bearer nope' },
    });
    expect(Object.keys(wrong.json()).sort()).toEqual(['api_version', 'service']);
    const full = (
      await app.inject({ url: '/api/v1/system/version', headers: { authorization: 'Bearer first-key' } })
    ).json();
    expect(full.service.version).toBe(SERVICE_VERSION);
    expect(full).toMatchObject({ runtime: { name: 'node', version: process.versions.node } });
    expect(full.framework.name).toBe('fastify');
  });
});

describe('without API keys', () => {
  it('is open', async () => {
    const app = await buildApp({ settings: loadSettings({}), registry: createBuiltinRegistry() });
    expect((await app.inject({ url: '/api/v1/adapters' })).statusCode).toBe(200);
    expect((await app.inject({ url: '/api/v1/system/health?debug=true' })).statusCode).toBe(200);
    await app.close();
  });
});
