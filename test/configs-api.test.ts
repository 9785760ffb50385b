import { createHash } from 'node:crypto';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAdapter } from '../src/adapters/adapter.js';
import { createBuiltinRegistry } from '../src/adapters/builtin.js';
import { buildApp } from '../src/app.js';
import { loadSettings } from '../src/settings.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { databaseTargets } from './helpers/databases.js';

const validYaml = `name: synthetic load
description: fan out into a sink
routes:
  - id: load
    adapters:
      - type: synthetic_fanout
        config: { count: 3 }
        destination: sink
  - id: sink
    adapters:
      - type: synthetic_sink
`;
const invalidYaml = 'routes:\n  - id: a\n    adapters: [{ type: no_such_adapter }]\n';
const brokenYaml = 'routes:\n  - id: a\n   adapters: [\n';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe.each(databaseTargets())('configs API on $name', (target) => {
  let test: TestApp;
  beforeAll(async () => {
    test = await createTestApp(target);
  });
  afterAll(async () => {
    await test?.close();
  });

  const create = (body: unknown) =>
    test.app.inject({ method: 'POST', url: '/api/v1/configs', payload: body as object });
  const count = async () =>
    (await test.app.inject({ url: '/api/v1/configs?limit=1000' })).json().total as number;

  it('creates a valid config: 201, runnable, hashed, version 1, name from the YAML', async () => {
    const response = await create({ config_yaml: validYaml });
    expect(response.statusCode).toBe(201);
    const body = response.json();
    expect(body).toMatchObject({
      name: 'synthetic load',
      description: 'fan out into a sink',
      origin: 'api',
      version: 1,
      is_active: true,
      is_runnable: true,
      config_yaml: validYaml,
      config_hash: sha256(validYaml),
      validation_report: { is_valid: true, error_count: 0, warning_count: 0, findings: [] },
    });
    expect(body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.headers.location).toBe(`/api/v1/configs/${body.id}`);
    expect(Object.keys(body)).toEqual([
      'id',
      'name',
      'description',
      'origin',
      'config_hash',
      'version',
      'created_at',
      'updated_at',
      'is_active',
      'validation_report',
      'config_yaml',
      'is_runnable',
    ]);
  });

  it('takes the YAML itself as the body (application/yaml) on create, update and validate', async () => {
    const yamlRequest = (method: 'POST' | 'PUT', url: string, body: string, type = 'application/yaml') =>
      test.app.inject({ method, url: `/api/v1${url}`, headers: { 'content-type': type }, payload: body });
    const created = await yamlRequest('POST', '/configs', validYaml);
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({
      name: 'synthetic load',
      description: 'fan out into a sink',
      config_yaml: validYaml,
      is_runnable: true,
      version: 1,
    });
    const updated = await yamlRequest(
      'PUT',
      `/configs/${created.json().id}`,
      `${validYaml}# changed\n`,
      'text/yaml',
    );
    expect(updated.json()).toMatchObject({ version: 2, config_hash: sha256(`${validYaml}# changed\n`) });
    const validated = await yamlRequest('POST', '/configs/validate', invalidYaml, 'application/x-yaml');
    expect(validated.statusCode).toBe(200);
    expect(validated.json().is_valid).toBe(false);
    // Other endpoints do not take YAML.
    const elsewhere = await yamlRequest('POST', '/webhooks', 'url: http://example.org/hook\n');
    expect(elsewhere.statusCode).toBe(415);
    expect(elsewhere.json()).toMatchObject({ code: 'unsupported_media_type' });
  });

  it('persists a config with validation errors (201, not runnable)', async () => {
    const response = await create({ name: 'broken on purpose', config_yaml: invalidYaml });
    expect(response.statusCode).toBe(201);
    expect(response.json()).toMatchObject({
      name: 'broken on purpose',
      is_runnable: false,
      validation_report: { is_valid: false, error_count: 1, findings: [{ code: 'E202', severity: 'error' }] },
    });
    const stored = await test.app.inject({ url: `/api/v1/configs/${response.json().id}` });
    expect(stored.statusCode).toBe(200);
  });

  it('refuses YAML that does not parse with 400 and stores nothing', async () => {
    const before = await count();
    const response = await create({ config_yaml: brokenYaml });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'config_yaml_invalid' });
    expect(response.json().detail).toMatch(/^YAML parse error at line \d+/);
    expect(await count()).toBe(before);
  });

  it.each([
    [{}, ['body', 'config_yaml'], 'missing'],
    [{ config_yaml: '' }, ['body', 'config_yaml'], 'string_too_short'],
    [{ config_yaml: validYaml, extra: 1 }, ['body', 'extra'], 'extra_forbidden'],
    [{ config_yaml: 42 }, ['body', 'config_yaml'], 'string_type'],
  ])('answers 422 for the body %j', async (body, loc, type) => {
    const response = await create(body);
    expect(response.statusCode).toBe(422);
    expect(response.json().detail).toContainEqual(expect.objectContaining({ loc, type }));
  });

  it('answers 422 for a missing body', async () => {
    const response = await test.app.inject({ method: 'POST', url: '/api/v1/configs' });
    expect(response.statusCode).toBe(422);
    expect(response.json().detail[0]).toMatchObject({ loc: ['body'], type: 'missing' });
  });

  it('lists active configs with total, limit and offset; reports included, YAML not', async () => {
    const total = await count();
    const page = await test.app.inject({ url: '/api/v1/configs?limit=1&offset=1' });
    expect(page.statusCode).toBe(200);
    const body = page.json();
    expect(body).toMatchObject({ total, limit: 1, offset: 1 });
    expect(body.configs).toHaveLength(1);
    expect(body.configs[0]).toHaveProperty('validation_report');
    expect(body.configs[0]).toHaveProperty('is_runnable');
    expect(body.configs[0]).not.toHaveProperty('config_yaml');
    const defaults = (await test.app.inject({ url: '/api/v1/configs' })).json();
    expect(defaults).toMatchObject({ limit: 100, offset: 0 });
  });

  it.each(['limit=0', 'limit=1001', 'offset=-1', 'limit=ten'])('answers 422 for %s', async (query) => {
    const response = await test.app.inject({ url: `/api/v1/configs?${query}` });
    expect(response.statusCode).toBe(422);
    expect(response.json().detail[0].loc[0]).toBe('query');
  });

  it('accepts the limit bounds 1 and 1000', async () => {
    expect((await test.app.inject({ url: '/api/v1/configs?limit=1' })).statusCode).toBe(200);
    expect((await test.app.inject({ url: '/api/v1/configs?limit=1000' })).statusCode).toBe(200);
  });

  it('gets a config by id: 404 unknown, 422 not a UUID', async () => {
    const unknown = await test.app.inject({ url: '/api/v1/configs/00000000-0000-7000-8000-000000000000' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({
      detail: 'config 00000000-0000-7000-8000-000000000000 not found',
      code: 'config_not_found',
    });
    const malformed = await test.app.inject({ url: '/api/v1/configs/not-a-uuid' });
    expect(malformed.statusCode).toBe(422);
    expect(malformed.json().detail[0]).toMatchObject({ loc: ['path', 'config_id'], type: 'uuid_parsing' });
  });

  it('updates: version + 1 each time, hash recomputed only from the YAML', async () => {
    const created = (await create({ config_yaml: validYaml })).json();
    const renamed = await test.app.inject({
      method: 'PUT',
      url: `/api/v1/configs/${created.id}`,
      payload: { name: 'renamed', description: 'new words' },
    });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json()).toMatchObject({
      name: 'renamed',
      description: 'new words',
      version: 2,
      config_hash: created.config_hash,
    });
    const changedYaml = validYaml.replace('count: 3', 'count: 4');
    const edited = await test.app.inject({
      method: 'PUT',
      url: `/api/v1/configs/${created.id}`,
      payload: { config_yaml: changedYaml },
    });
    expect(edited.json()).toMatchObject({
      version: 3,
      config_hash: sha256(changedYaml),
      config_yaml: changedYaml,
      name: 'renamed',
    });
    expect(edited.json().created_at).toBe(created.created_at);
    expect(Date.parse(edited.json().updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));
  });

  it('stores an update that introduces validation errors, refuses one that does not parse', async () => {
    const created = (await create({ config_yaml: validYaml })).json();
    const invalid = await test.app.inject({
      method: 'PUT',
      url: `/api/v1/configs/${created.id}`,
      payload: { config_yaml: invalidYaml },
    });
    expect(invalid.statusCode).toBe(200);
    expect(invalid.json()).toMatchObject({ version: 2, is_runnable: false });
    const broken = await test.app.inject({
      method: 'PUT',
      url: `/api/v1/configs/${created.id}`,
      payload: { config_yaml: brokenYaml },
    });
    expect(broken.statusCode).toBe(400);
    const after = (await test.app.inject({ url: `/api/v1/configs/${created.id}` })).json();
    expect(after).toMatchObject({ version: 2, config_yaml: invalidYaml });
  });

  it('answers 404 and 422 on update', async () => {
    const missing = await test.app.inject({
      method: 'PUT',
      url: '/api/v1/configs/00000000-0000-7000-8000-000000000000',
      payload: { name: 'x' },
    });
    expect(missing.statusCode).toBe(404);
    const created = (await create({ config_yaml: validYaml })).json();
    const empty = await test.app.inject({ method: 'PUT', url: `/api/v1/configs/${created.id}`, payload: {} });
    expect(empty.statusCode).toBe(422);
  });

  it('soft-deletes: 204, then 404 on read, update and delete, and gone from the list', async () => {
    const created = (await create({ config_yaml: validYaml })).json();
    const before = await count();
    const removed = await test.app.inject({ method: 'DELETE', url: `/api/v1/configs/${created.id}` });
    expect(removed.statusCode).toBe(204);
    expect(removed.body).toBe('');
    expect((await test.app.inject({ url: `/api/v1/configs/${created.id}` })).statusCode).toBe(404);
    expect(
      (await test.app.inject({ method: 'DELETE', url: `/api/v1/configs/${created.id}` })).statusCode,
    ).toBe(404);
    const update = await test.app.inject({
      method: 'PUT',
      url: `/api/v1/configs/${created.id}`,
      payload: { name: 'x' },
    });
    expect(update.statusCode).toBe(404);
    expect(await count()).toBe(before - 1);
    const row = await test.database.db
      .selectFrom('pipeline_configs')
      .selectAll()
      .where('id', '=', created.id)
      .executeTakeFirst();
    expect(row).toMatchObject({ is_active: false });
    expect(row?.deleted_at).not.toBeNull();
  });

  it('validates without persisting: always 200, a parse error is finding E100', async () => {
    const before = await count();
    for (const [yaml, valid] of [
      [validYaml, true],
      [invalidYaml, false],
      [brokenYaml, false],
    ] as const) {
      const response = await test.app.inject({
        method: 'POST',
        url: '/api/v1/configs/validate',
        payload: { config_yaml: yaml },
      });
      expect(response.statusCode).toBe(200);
      expect(response.json().is_valid).toBe(valid);
    }
    const broken = await test.app.inject({
      method: 'POST',
      url: '/api/v1/configs/validate',
      payload: { config_yaml: brokenYaml },
    });
    expect(broken.json().findings[0].code).toBe('E100');
    expect(await count()).toBe(before);
    const missing = await test.app.inject({ method: 'POST', url: '/api/v1/configs/validate', payload: {} });
    expect(missing.statusCode).toBe(422);
  });

  it('re-derives reports against the live registry on every read', async () => {
    const custom = defineAdapter({
      type: 'custom_transform',
      group: 'synthetic',
      summary: 'registered during the test',
      config: Type.Object({}),
      input: Type.Object({}),
      output: Type.Object({}),
      create: () => async () => [],
    });
    const yaml = 'routes:\n  - id: a\n    adapters: [{ type: custom_transform }]\n';
    const created = (await create({ config_yaml: yaml })).json();
    expect(created.is_runnable).toBe(false);
    test.registry.register(custom);
    const afterRegister = (await test.app.inject({ url: `/api/v1/configs/${created.id}` })).json();
    expect(afterRegister).toMatchObject({ is_runnable: true, version: 1 });
    const listed = (await test.app.inject({ url: '/api/v1/configs?limit=1000' })).json();
    expect(listed.configs.find((config: { id: string }) => config.id === created.id).is_runnable).toBe(true);
    test.registry.unregister('custom_transform');
    const afterRemoval = (await test.app.inject({ url: `/api/v1/configs/${created.id}` })).json();
    expect(afterRemoval).toMatchObject({
      is_runnable: false,
      validation_report: { findings: [{ code: 'E202' }] },
    });
  });
});

describe('configs API without a database', () => {
  it('answers 503', async () => {
    const app = await buildApp({ settings: loadSettings({}), registry: createBuiltinRegistry() });
    const response = await app.inject({ url: '/api/v1/configs' });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ code: 'database_unavailable' });
    await app.close();
  });
});
