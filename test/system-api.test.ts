import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { connectStompBroker } from '../src/broker/stomp/stomp-broker.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { brokerTargets, stompUrl } from './helpers/brokers.js';
import { databaseTargets } from './helpers/databases.js';
import { skipBecause } from './helpers/skip.js';

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
    // The details need a key where WEIR_API_KEYS is set (test/auth.test.ts).
    const body = (
      await test.app.inject({ url: '/api/v1/system/health?debug=true', headers: authorized })
    ).json();
    expect(body.components.database).toHaveProperty('connection');
    expect(body.components.database.error).toBeNull();
    expect(body.components.queue).toMatchObject({ kind: 'memory', connection: 'in-process', error: null });
    expect(body.components.storage).toMatchObject({ kind: 'filesystem', error: null });
    expect(body.components.storage.connection).toBe(test.storage.location);
    expect(test.storage.location).toMatch(/^\/.*objects/);
    expect(JSON.stringify(body)).not.toContain('planted');
    const bad = await test.app.inject({ url: '/api/v1/system/health?debug=maybe' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().detail[0]).toMatchObject({ loc: ['query', 'debug'] });
  });

  it('reports versions of service, runtime, framework, validation library and database', async () => {
    // With a key: without one, only the service's own version is shown (test/auth.test.ts).
    const body = (
      await test.app.inject({
        url: '/api/v1/system/version',
        headers: { authorization: 'Bearer planted-api-key-1' },
      })
    ).json();
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
    // Endpoints that need the database answer 503, retryable, not a 500.
    for (const url of ['/api/v1/configs', '/api/v1/storage/objects', '/api/v1/webhooks']) {
      const response = await other.app.inject({ url });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toMatchObject({ code: 'database_unavailable' });
    }
    await other.app.close();
  });
});

const stompTarget = (await brokerTargets()).find((target) => target.name === 'stomp');

describe.skipIf(
  skipBecause(
    stompTarget ? undefined : "RabbitMQ's STOMP listener does not answer (set WEIR_TEST_STOMP_URL; CI does)",
    'system health of a STOMP broker',
  ),
)('system health of a STOMP broker', () => {
  it('tells where it is connected, and that it is reconnecting once the connection drops', async () => {
    const broker = (await stompTarget?.open()) as Awaited<ReturnType<typeof connectStompBroker>>;
    const test = await createTestApp(databaseTargets()[0] as ReturnType<typeof databaseTargets>[number], {
      broker,
    });
    try {
      const health = async () =>
        (await test.app.inject({ url: '/api/v1/system/health?debug=true' })).json().components.queue;
      const { hostname, port } = new URL(stompUrl);
      expect(await health()).toMatchObject({
        status: 'healthy',
        kind: 'stomp',
        connection: expect.stringMatching(
          new RegExp(`^connected to ${hostname}:${port} .* since .*; 0 reconnects$`),
        ),
        error: null,
      });
      broker.dropConnection();
      // The socket closes on a later turn; the reconnect then waits 100 ms.
      while (broker.connected()) await new Promise((resolve) => setImmediate(resolve));
      const dropped = await health();
      expect(dropped.status).toBe('unhealthy');
      expect(dropped.connection).toMatch(/^reconnecting to .*; 0 reconnects, last drop: /);
      expect(dropped.error).toMatch(/not connected/);
      await waitFor(async () => (await health()).status === 'healthy');
      expect((await health()).connection).toMatch(/; 1 reconnect, last drop: /);
    } finally {
      await test.close();
    }
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
