import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { databaseTargets } from './helpers/databases.js';

describe.each(databaseTargets())('system API on $name', (target) => {
  let test: TestApp;
  beforeAll(async () => {
    test = await createTestApp(target, {
      environment: {
        WEIR_API_KEYS: 'planted-api-key-1,planted-api-key-2',
        BROKER_URL: 'stomp://guest:planted-broker-password@127.0.0.1:61613',
        WEIR_LLM_PROFILES: JSON.stringify([
          {
            name: 'hosted',
            provider: 'openai',
            base_url: 'http://127.0.0.1:9/v1',
            api_key: 'planted-llm-key',
          },
        ]),
      },
    });
  });
  afterAll(async () => {
    await test?.close();
  });
  const authorized = { authorization: 'Bearer planted-api-key-2' };

  it('reports health of every component without credentials', async () => {
    const response = await test.app.inject({ url: '/api/v1/system/health' });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.status).toBe('healthy');
    expect(body.components.database).toMatchObject({ status: 'healthy', kind: target.name });
    expect(body.components.storage).toMatchObject({ status: 'healthy', kind: 'filesystem' });
    expect(body.components.queue).toMatchObject({ status: 'healthy', kind: 'memory' });
    expect(body.components.orchestrator).toMatchObject({ status: 'healthy' });
    expect(body.components.database).not.toHaveProperty('connection');
  });

  it('adds connection details with debug=true, and 422 for a bad flag', async () => {
    const body = (await test.app.inject({ url: '/api/v1/system/health?debug=true' })).json();
    expect(body.components.database).toHaveProperty('connection');
    expect(body.components.database.error).toBeNull();
    expect(JSON.stringify(body)).not.toContain('planted');
    const bad = await test.app.inject({ url: '/api/v1/system/health?debug=maybe' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0]).toMatchObject({ loc: ['query', 'debug'] });
  });

  it('reports versions of service, runtime, framework, validation library and database', async () => {
    const body = (await test.app.inject({ url: '/api/v1/system/version' })).json();
    expect(body).toMatchObject({
      service: { name: 'weir' },
      api_version: '0.5.1',
      runtime: { name: 'node', version: process.versions.node },
      framework: { name: 'fastify' },
      validation: { name: 'typebox' },
      database: { kind: target.name },
    });
    expect(body.framework.version).toMatch(/^5\./);
    expect(body.validation.version).toMatch(/^\d+\.\d+/);
    expect(body.database.version).toMatch(/^\d+/);
  });

  it('never shows a planted secret in the sanitized configuration', async () => {
    const response = await test.app.inject({ url: '/api/v1/system/config', headers: authorized });
    expect(response.statusCode).toBe(200);
    const text = response.body;
    expect(text).not.toContain('planted');
    const settings = response.json().settings;
    expect(settings.api_keys).toEqual(['********', '********']);
    expect(settings.broker_url).toBe('stomp://guest:********@127.0.0.1:61613');
    expect(settings.llm_profiles[0]).toMatchObject({ name: 'hosted', api_key: '********' });
  });

  it('reports an unreachable database as unhealthy instead of failing', async () => {
    const other = await createTestApp(target);
    await other.orchestrator.stop();
    await other.database.close();
    const body = (await other.app.inject({ url: '/api/v1/system/health?debug=true' })).json();
    expect(body.status).toBe('unhealthy');
    expect(body.components.database.status).toBe('unhealthy');
    expect(body.components.database.error).toEqual(expect.any(String));
    const version = (await other.app.inject({ url: '/api/v1/system/version' })).json();
    expect(version.database.version).toBeNull();
    expect(body.components.orchestrator.status).toBe('not_started');
    await other.app.close();
  });
});
