/**
 * POST /system/mq-diagnostic against a STOMP server on loopback (issue 17, item 2): no header
 * injection through username or virtual_host, and targets other than the configured broker's
 * host pass the address policy (WEIR_MQ_DIAGNOSTIC_ALLOWED_CIDRS).
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuiltinRegistry } from '../src/adapters/builtin.js';
import { buildApp } from '../src/app.js';
import { loadSettings } from '../src/settings.js';
import { type StompDouble, startStompDouble } from './helpers/stomp-double.js';

describe('mq-diagnostic hardening', () => {
  let server: StompDouble;
  const apps: FastifyInstance[] = [];
  async function appWith(environment: Record<string, string>): Promise<FastifyInstance> {
    const app = await buildApp({ settings: loadSettings(environment), registry: createBuiltinRegistry() });
    apps.push(app);
    return app;
  }
  const diagnose = (app: FastifyInstance, body: object) =>
    app.inject({ method: 'POST', url: '/api/v1/system/mq-diagnostic', payload: body });
  const phases = (body: { steps: Array<{ phase: string; status: string }> }) =>
    Object.fromEntries(body.steps.map((step) => [step.phase, step.status]));

  beforeAll(async () => {
    server = await startStompDouble();
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await server.close();
  });

  it.each([
    ['username', { username: 'guest\r\nx-injected:yes' }],
    ['virtual_host', { virtual_host: '/\r\nx-injected:yes' }],
  ])('answers 422 for a line break in %s and sends nothing', async (field, fields) => {
    const app = await appWith({ WEIR_MQ_DIAGNOSTIC_ALLOWED_CIDRS: '127.0.0.0/8' });
    const before = server.connections();
    const response = await diagnose(app, {
      host: '127.0.0.1',
      port: server.port,
      timeout_ms: 2000,
      ...fields,
    });
    expect(response.statusCode).toBe(422);
    expect(JSON.stringify(response.json().detail)).toContain(field);
    expect(server.connections()).toBe(before);
    expect(server.received()).not.toContain('x-injected');
  });

  it('refuses a loopback target that is not the configured broker host, before connecting', async () => {
    const app = await appWith({});
    const before = server.connections();
    const response = await diagnose(app, { host: '127.0.0.1', port: server.port, timeout_ms: 2000 });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.success).toBe(false);
    expect(phases(body)).toEqual({
      dns: 'failed',
      tcp: 'skipped',
      tls: 'skipped',
      stomp_connect: 'skipped',
      round_trip: 'skipped',
    });
    expect(body.steps[0].detail).toMatch(/refused: .*WEIR_MQ_DIAGNOSTIC_ALLOWED_CIDRS/);
    expect(server.connections()).toBe(before);
  });

  it('reaches the configured broker host without an allow-list', async () => {
    const app = await appWith({ BROKER_URL: `stomp://guest:guest@127.0.0.1:${server.port}` });
    const body = (await diagnose(app, { host: '127.0.0.1', port: server.port, timeout_ms: 2000 })).json();
    expect(body.success).toBe(true);
    expect(phases(body)).toMatchObject({ dns: 'ok', tcp: 'ok', stomp_connect: 'ok', round_trip: 'ok' });
  });

  it('reaches a target the allow-list opens', async () => {
    const app = await appWith({ WEIR_MQ_DIAGNOSTIC_ALLOWED_CIDRS: '127.0.0.0/8, ::1/128' });
    const body = (
      await diagnose(app, { host: '127.0.0.1', port: server.port, timeout_ms: 2000, username: 'guest' })
    ).json();
    expect(body.success).toBe(true);
  });
});
