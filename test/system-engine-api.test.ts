import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuiltinRegistry } from '../src/adapters/builtin.js';
import { buildApp } from '../src/app.js';
import { egressPolicy } from '../src/http/egress-policy.js';
import { createWebClient } from '../src/http/web-client.js';
import { loadSettings } from '../src/settings.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { brokerTargets, engineCombinations, stompUrl } from './helpers/brokers.js';
import { skipBecause } from './helpers/skip.js';

const stomp = (await brokerTargets()).some((target) => target.name === 'stomp');
const noStomp = stomp
  ? undefined
  : "RabbitMQ's STOMP listener does not answer (set WEIR_TEST_STOMP_URL; CI does)";
const { hostname: stompHost, port: stompPort } = new URL(stompUrl);

describe.each(await engineCombinations())('system metrics and reload on $name', ({ database, broker }) => {
  let test: TestApp;
  let pipelines: string;
  let createdAt: number;
  beforeAll(async () => {
    pipelines = await mkdtemp(path.join(tmpdir(), 'weir-reload-'));
    createdAt = Date.now();
    test = await createTestApp(database, {
      broker: await broker.open(),
      environment: { WEIR_PIPELINES_DIR: pipelines },
    });
  });
  afterAll(async () => {
    await test?.close();
    await rm(pipelines, { recursive: true, force: true });
  });

  const createConfig = async (config_yaml: string) =>
    (await test.app.inject({ method: 'POST', url: '/api/v1/configs', payload: { config_yaml } })).json();
  const start = async (configId: string, query = '') =>
    (await test.app.inject({ method: 'POST', url: `/api/v1/configs/${configId}/run${query}` })).json();

  it('counts messages of this instance and running routes', async () => {
    const config = await createConfig(
      'routes:\n  - id: m\n    adapters:\n      - type: synthetic_fanout\n        config: { count: 5 }\n      - type: synthetic_sink\n',
    );
    const run = await start(config.id);
    await test.app.inject({
      method: 'POST',
      url: `/api/v1/executions/${run.id}/wait`,
      payload: { timeout_seconds: 30 },
    });
    // Up for at least 2 s, so a real uptime is positive (it is rounded to whole seconds).
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 2_000 - (Date.now() - createdAt))));
    // The fan-out's handler may still await its sends' receipts and its ack after the execution
    // ended (its sink messages finished first): in flight until then, though already counted.
    const systemMetrics = async () => (await test.app.inject({ url: '/api/v1/system/metrics' })).json();
    await expect.poll(async () => (await systemMetrics()).messages_in_flight, { timeout: 10_000 }).toBe(0);
    const metrics = await systemMetrics();
    // The service counts from when its module loaded: after this process started, before the app.
    const sinceApp = (Date.now() - createdAt) / 1000;
    const sinceProcess = process.uptime();
    expect(metrics).toMatchObject({
      messages_received: 6,
      messages_completed: 6,
      messages_failed: 0,
      messages_in_flight: 0,
    });
    expect(metrics.uptime_seconds).toBeGreaterThanOrEqual(Math.floor(sinceApp));
    expect(metrics.uptime_seconds).toBeGreaterThanOrEqual(1);
    expect(metrics.uptime_seconds).toBeLessThanOrEqual(Math.ceil(sinceProcess));
    expect(metrics.running_routes).toBe(0);
    // A running execution (started without its message) runs its route until it is paused.
    const waiting = await start(config.id, '?skip_init_message=true');
    const runningRoutes = async () =>
      (await test.app.inject({ url: '/api/v1/system/metrics' })).json().running_routes;
    expect(await runningRoutes()).toBe(1);
    await test.app.inject({ method: 'PATCH', url: '/api/v1/pipelines/m', payload: { action: 'pause' } });
    expect(await runningRoutes()).toBe(0);
    await test.app.inject({ method: 'PATCH', url: '/api/v1/pipelines/m', payload: { action: 'resume' } });
    expect(await runningRoutes()).toBe(1);
    await test.app.inject({ method: 'POST', url: `/api/v1/executions/${waiting.id}/cancel` });
    expect(await runningRoutes()).toBe(0);
  });

  it('reports the circuit breaker of a host the web adapters cannot reach', async () => {
    // A port nothing listens on: every request fails at once (connection refused).
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const host = `127.0.0.1:${(closed.address() as net.AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    // The client the web adapters build, with the service's breakers.
    const client = createWebClient({
      requestsPerSecond: 1000,
      obeyRobots: false,
      timeoutMs: 2000,
      maxBytes: 1000,
      egress: egressPolicy(['127.0.0.0/8']),
    });
    for (let attempt = 0; attempt < 5; attempt++)
      await expect(client.get(`http://${host}/page`)).rejects.toThrow(/ECONNREFUSED/);
    await expect(client.get(`http://${host}/page`)).rejects.toThrow(/circuit open/);
    const metrics = (await test.app.inject({ url: '/api/v1/system/metrics' })).json();
    expect(metrics.circuit_breakers[host]).toMatchObject({ state: 'open', consecutive_failures: 5 });
    expect(Date.parse(metrics.circuit_breakers[host].opened_at)).toBeLessThanOrEqual(Date.now());
  });

  it('reloads the pipeline files and restarts processors', async () => {
    await writeFile(
      path.join(pipelines, 'reloaded.yaml'),
      'routes:\n  - id: r\n    adapters: [{ type: synthetic_sink }]\n',
    );
    const response = await test.app.inject({ method: 'POST', url: '/api/v1/system/reload' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ success: true, routes_reloaded: 0 });
    expect(response.json().message).toContain('1 pipeline files read (1 new or changed)');
    const configs = (await test.app.inject({ url: '/api/v1/configs?limit=1000' })).json();
    expect(configs.configs).toContainEqual(expect.objectContaining({ origin: 'file:reloaded.yaml' }));
  });

  it('restarts the processors of a running execution on reload, and it still completes', async () => {
    const config = await createConfig(
      'routes:\n  - id: slow\n    adapters:\n      - type: synthetic_fanout\n        config: { count: 20 }\n' +
        '        destination: sink\n  - id: sink\n    adapters:\n      - type: synthetic_sink\n' +
        '        config: { work_ms: 150 }\n',
    );
    const run = await start(config.id);
    const completed = async () =>
      (await test.app.inject({ url: `/api/v1/executions/${run.id}/lineage?status=completed&limit=1` })).json()
        .total;
    // Mid-run: some messages of the slow sink done, not all.
    while ((await completed()) < 3) await new Promise((resolve) => setTimeout(resolve, 20));
    const reload = await test.app.inject({ method: 'POST', url: '/api/v1/system/reload' });
    expect(reload.json()).toMatchObject({ success: true, routes_reloaded: 2 });
    const waited = await test.app.inject({
      method: 'POST',
      url: `/api/v1/executions/${run.id}/wait`,
      payload: { timeout_seconds: 30 },
    });
    expect(waited.json()).toMatchObject({
      status: 'completed',
      statistics: { total_messages: 21, completed_messages: 21, failed_messages: 0 },
    });
  });

  it('answers 503 for metrics and reload without an orchestrator', async () => {
    const app = await buildApp({ settings: loadSettings({}), registry: createBuiltinRegistry() });
    expect((await app.inject({ url: '/api/v1/system/metrics' })).statusCode).toBe(503);
    expect((await app.inject({ method: 'POST', url: '/api/v1/system/reload' })).statusCode).toBe(503);
    await app.close();
  });
});

describe('mq-diagnostic', () => {
  let app: Awaited<ReturnType<typeof buildApp>>;
  beforeAll(async () => {
    // The local broker and the closed port are on loopback: allow it explicitly.
    app = await buildApp({
      settings: loadSettings({ WEIR_MQ_DIAGNOSTIC_ALLOWED_CIDRS: '127.0.0.0/8, ::1/128' }),
      registry: createBuiltinRegistry(),
    });
  });
  afterAll(async () => {
    await app.close();
  });
  const diagnose = (body: object) =>
    app.inject({ method: 'POST', url: '/api/v1/system/mq-diagnostic', payload: body });

  it.skipIf(skipBecause(noStomp, 'the mq-diagnostic round trip on RabbitMQ'))(
    'walks DNS, TCP, STOMP CONNECT and a round trip against RabbitMQ',
    async () => {
      const response = await diagnose({
        host: stompHost,
        port: Number(stompPort),
        username: 'guest',
        password: 'guest',
      });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body.success).toBe(true);
      expect(
        body.steps.map((step: { phase: string; status: string }) => `${step.phase}:${step.status}`),
      ).toEqual(['dns:ok', 'tcp:ok', 'tls:skipped', 'stomp_connect:ok', 'round_trip:ok']);
      expect(body.connection.server).toMatch(/RabbitMQ/);
      expect(body.queues).toEqual([expect.objectContaining({ queue: 'weir.diagnostic', ok: true })]);
      expect(response.body).not.toContain('"guest"');
    },
  );

  it.skipIf(skipBecause(noStomp, 'the mq-diagnostic refused credentials test'))(
    'reports refused credentials at the STOMP CONNECT phase',
    async () => {
      const body = (
        await diagnose({
          host: stompHost,
          port: Number(stompPort),
          username: 'guest',
          password: 'not-the-password',
        })
      ).json();
      expect(body.success).toBe(false);
      const phases = Object.fromEntries(
        body.steps.map((step: { phase: string; status: string }) => [step.phase, step.status]),
      );
      expect(phases).toMatchObject({ dns: 'ok', tcp: 'ok', stomp_connect: 'failed', round_trip: 'skipped' });
      expect(response(body)).not.toContain('not-the-password');
    },
  );

  it('reports a refused TCP connection and skips the rest', async () => {
    const body = (await diagnose({ host: '127.0.0.1', port: 1, timeout_ms: 2000 })).json();
    expect(body.success).toBe(false);
    expect(body.steps.map((step: { status: string }) => step.status)).toEqual([
      'ok',
      'failed',
      'skipped',
      'skipped',
      'skipped',
    ]);
    expect(body.connection).toBeNull();
  });

  it('answers 422 without a host', async () => {
    expect((await diagnose({ port: 61613 })).statusCode).toBe(422);
  });
});

function response(body: unknown): string {
  return JSON.stringify(body);
}
