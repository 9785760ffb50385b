import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinAdapters, createBuiltinRegistry } from '../src/adapters/builtin.js';
import { buildApp } from '../src/app.js';
import { loadSettings } from '../src/settings.js';

describe('adapters API', () => {
  let app: Awaited<ReturnType<typeof buildApp>>;
  beforeAll(async () => {
    app = await buildApp({ settings: loadSettings({}), registry: createBuiltinRegistry() });
  });
  afterAll(async () => {
    await app.close();
  });

  it('lists the registered adapter types', async () => {
    const response = await app.inject({ url: '/api/v1/adapters' });
    expect(response.statusCode).toBe(200);
    const body = response.json() as { adapters: string[]; total: number };
    // Sorted, and every registered type (the registry is authoritative, spec 2.3).
    expect(body.adapters).toEqual([...body.adapters].sort());
    expect(body.total).toBe(body.adapters.length);
    expect(body.adapters).toEqual(
      expect.arrayContaining(['synthetic_fanout', 'web_scraper', 'embedding_generator']),
    );
    expect(body.adapters).toEqual(builtinAdapters.map((adapter) => adapter.type).sort());
  });

  it('serves the config JSON Schema with descriptions and defaults, and metadata', async () => {
    const response = await app.inject({ url: '/api/v1/adapters/synthetic_fanout' });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({
      type: 'synthetic_fanout',
      group: 'synthetic',
      fan_out: true,
      terminal: false,
    });
    expect(body.config_schema.properties.count).toMatchObject({ type: 'integer', minimum: 1, default: 10 });
    expect(body.config_schema.properties.count.description).toBeTruthy();
    expect(body.output_schema.properties).toHaveProperty('index');
  });

  it('answers 404 for an unknown type', async () => {
    const response = await app.inject({ url: '/api/v1/adapters/metadata_extractor' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ code: 'adapter_not_found' });
    const validate = await app.inject({
      method: 'POST',
      url: '/api/v1/adapters/metadata_extractor/validate',
      payload: { config: {} },
    });
    expect(validate.statusCode).toBe(404);
  });

  it('validates a config without creating an instance', async () => {
    const good = await app.inject({
      method: 'POST',
      url: '/api/v1/adapters/synthetic_fanout/validate',
      payload: { config: { count: 5 } },
    });
    expect(good.statusCode).toBe(200);
    expect(good.json()).toEqual({
      adapter_type: 'synthetic_fanout',
      is_valid: true,
      errors: [],
      normalized_config: { count: 5, payload_bytes: 0 },
    });
    const bad = await app.inject({
      method: 'POST',
      url: '/api/v1/adapters/synthetic_sink/validate',
      payload: { config: { work_ms: 'slow', speed: 1 } },
    });
    expect(bad.json()).toMatchObject({ is_valid: false });
    expect(
      bad
        .json()
        .errors.map((error: { path: string }) => error.path)
        .sort(),
    ).toEqual(['', '/work_ms']);
  });

  it('answers 422 when the body has no config', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/adapters/synthetic_sink/validate',
      payload: {},
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().detail[0]).toMatchObject({ loc: ['body', 'config'], type: 'missing' });
  });
});

describe('adapters API without a registry', () => {
  it.each([
    ['GET', '/api/v1/adapters'],
    ['GET', '/api/v1/adapters/synthetic_sink'],
    ['POST', '/api/v1/adapters/synthetic_sink/validate'],
  ] as const)('%s %s answers 503', async (method, url) => {
    const app = await buildApp({ settings: loadSettings({}) });
    const response = await app.inject({
      method,
      url,
      ...(method === 'POST' ? { payload: { config: {} } } : {}),
    });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ code: 'registry_unavailable' });
    await app.close();
  });
});
