/**
 * POST /system/mq-diagnostic against a STOMP server on loopback (issue 17, item 2): no header
 * injection through username or virtual_host, and targets other than the configured broker's
 * host pass the address policy (WEIR_MQ_DIAGNOSTIC_ALLOWED_CIDRS).
 */
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuiltinRegistry } from '../src/adapters/builtin.js';
import { buildApp } from '../src/app.js';
import { DIAGNOSTIC_QUEUE_EXPIRES_MS } from '../src/broker/stomp/diagnostic.js';
import { createFrameParser, encodeFrame, type Frame } from '../src/broker/stomp/frames.js';
import { loadSettings } from '../src/settings.js';
import { skipBecause } from './helpers/skip.js';
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

  it('refuses another port of the configured broker host, before connecting (issue 30)', async () => {
    const other = await startStompDouble();
    try {
      const app = await appWith({ BROKER_URL: `stomp://guest:guest@127.0.0.1:${server.port}` });
      const body = (await diagnose(app, { host: '127.0.0.1', port: other.port, timeout_ms: 2000 })).json();
      expect(body.success).toBe(false);
      expect(phases(body)).toMatchObject({ dns: 'failed', tcp: 'skipped' });
      expect(body.steps[0].detail).toMatch(/refused: .*WEIR_MQ_DIAGNOSTIC_ALLOWED_CIDRS/);
      expect(other.connections()).toBe(0);
    } finally {
      await other.close();
    }
  });
});

const stompUrl = process.env.WEIR_TEST_STOMP_URL;

describe.skipIf(
  skipBecause(
    stompUrl ? undefined : 'WEIR_TEST_STOMP_URL is not set (CI sets it)',
    'mq-diagnostic queues on RabbitMQ',
  ),
)('mq-diagnostic queues on RabbitMQ expire (issue 30)', () => {
  it('declares its queue with x-expires, which RabbitMQ keeps as the queue argument', async () => {
    const broker = new URL(stompUrl as string);
    const port = Number(broker.port || 61613);
    const app = await buildApp({
      settings: loadSettings({ BROKER_URL: stompUrl as string }),
      registry: createBuiltinRegistry(),
    });
    const queue = `weir.diagnostic.test-${randomUUID()}`;
    try {
      const response = await app.inject({
        method: 'POST',
        url: '/api/v1/system/mq-diagnostic',
        payload: { host: broker.hostname, port, username: 'guest', password: 'guest', queues: [queue] },
      });
      expect(response.json()).toMatchObject({ success: true, queues: [{ queue, ok: true }] });
    } finally {
      await app.close();
    }
    // Declaring the same queue again without the argument is refused by RabbitMQ, and its
    // answer names the expiry the queue was declared with.
    const answer = await subscribeWithoutArguments(broker.hostname, port, queue);
    expect(answer.command).toBe('ERROR');
    expect(new TextDecoder().decode(answer.body)).toMatch(
      new RegExp(`inequivalent arg 'x-expires'.*current is the value '${DIAGNOSTIC_QUEUE_EXPIRES_MS}'`),
    );
  });
});

/** A plain STOMP SUBSCRIBE to `/queue/<queue>` without queue arguments: the broker's answer. */
async function subscribeWithoutArguments(host: string, port: number, queue: string): Promise<Frame> {
  const socket = net.connect({ host, port });
  try {
    return await new Promise<Frame>((resolve, reject) => {
      const parser = createFrameParser((frame) => {
        if (frame.command === 'CONNECTED') {
          socket.write(encodeFrame('SUBSCRIBE', { id: '1', destination: `/queue/${queue}`, receipt: 'r' }));
        } else resolve(frame);
      });
      socket.on('data', (chunk: Buffer) => parser.push(chunk));
      socket.on('error', reject);
      socket.write(
        encodeFrame('CONNECT', { 'accept-version': '1.2', host: '/', login: 'guest', passcode: 'guest' }),
      );
    });
  } finally {
    socket.destroy();
  }
}
