import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type StompDouble, startStompDouble } from '../../../test/helpers/stomp-double.js';
import {
  DIAGNOSTIC_QUEUE_EXPIRES_MS,
  diagnosticAddressGuard,
  diagnosticTargetPolicy,
  runStompDiagnostic,
} from './diagnostic.js';

describe('STOMP diagnostic against a STOMP server on loopback', () => {
  let server: StompDouble;
  beforeEach(async () => {
    server = await startStompDouble();
  });
  afterEach(async () => {
    await server.close();
  });

  const base = () => ({ host: '127.0.0.1', port: server.port, tls: false, timeout_ms: 2000, queues: ['q'] });
  const loopback = diagnosticAddressGuard(['127.0.0.0/8']);
  const statuses = (steps: Array<{ phase: string; status: string }>) =>
    Object.fromEntries(steps.map((step) => [step.phase, step.status]));

  it('walks every phase when the target is allow-listed', async () => {
    const result = await runStompDiagnostic({
      ...base(),
      guard: loopback,
      username: 'guest',
      password: 'a:b',
    });
    expect(result.success).toBe(true);
    expect(result.connection?.server).toBe('stomp-double/1');
    // CONNECT headers go verbatim (STOMP 1.2): a colon in a password is not escaped.
    expect(server.frames[0]?.headers).toMatchObject({ login: 'guest', passcode: 'a:b', host: '/' });
  });

  it.each([
    ['username', { username: 'guest\r\nx-injected:yes' }],
    ['virtual_host', { virtual_host: '/\nx-injected:yes' }],
    ['password', { password: 'pw\r\nx-injected:yes' }],
  ])('never sends a CONNECT frame with a line break in %s', async (_field, fields) => {
    const result = await runStompDiagnostic({ ...base(), guard: loopback, ...fields });
    expect(result.success).toBe(false);
    expect(statuses(result.steps)).toMatchObject({ tcp: 'ok', stomp_connect: 'failed' });
    expect(JSON.stringify(result)).toMatch(/cannot contain a line break/);
    expect(JSON.stringify(result)).not.toContain('x-injected');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.received()).not.toContain('x-injected');
  });

  it.each([
    ['127.0.0.1', /127\.0\.0\.1 refused: .*loopback.*WEIR_MQ_DIAGNOSTIC_ALLOWED_CIDRS/],
    ['::ffff:127.0.0.1', /loopback/],
    ['169.254.169.254', /cloud metadata/],
    ['localhost', /localhost refused/],
  ])('refuses %s before connecting when no allow-list opens it', async (host, reason) => {
    const dialled: string[] = [];
    const result = await runStompDiagnostic({
      ...base(),
      host,
      guard: diagnosticAddressGuard([]),
      // Were the guard to let it through, the attempt is recorded here and never made.
      connect: (options) => {
        dialled.push(`${options.host}:${options.port}`);
        throw new Error('connection attempted');
      },
    });
    expect(dialled).toEqual([]);
    expect(result.success).toBe(false);
    expect(result.steps[0]).toMatchObject({
      phase: 'dns',
      status: 'failed',
      detail: expect.stringMatching(reason),
    });
    expect(statuses(result.steps)).toMatchObject({ tcp: 'skipped', stomp_connect: 'skipped' });
    expect(server.connections()).toBe(0);
  });

  it('declares its queues with an expiry, alike on SUBSCRIBE and SEND (issue 30)', async () => {
    const result = await runStompDiagnostic({ ...base(), guard: loopback, queues: ['q1', 'q2'] });
    expect(result.success).toBe(true);
    const queueFrames = server.frames.filter(
      (frame) => frame.command === 'SUBSCRIBE' || frame.command === 'SEND',
    );
    expect(queueFrames).toHaveLength(4);
    for (const frame of queueFrames) {
      expect(frame.headers['x-expires'], frame.command).toBe(String(DIAGNOSTIC_QUEUE_EXPIRES_MS));
    }
  });
});

describe('diagnosticTargetPolicy (issue 30)', () => {
  const refusalOf = (guard: ReturnType<ReturnType<typeof diagnosticTargetPolicy>>, address: string) =>
    guard?.refusal(address);

  it('exempts the broker host and port only; other ports of that host pass the address policy', () => {
    const guardFor = diagnosticTargetPolicy('stomp://guest:guest@127.0.0.1:61613', []);
    expect(guardFor({ host: '127.0.0.1', port: 61613 })).toBeUndefined();
    for (const port of [22, 5432, 15672, 61614]) {
      expect(refusalOf(guardFor({ host: '127.0.0.1', port }), '127.0.0.1'), String(port)).toMatch(
        /loopback.*WEIR_MQ_DIAGNOSTIC_ALLOWED_CIDRS/,
      );
    }
  });

  it('compares hosts as the broker URL names them: case, brackets, final dot, default port', () => {
    const named = diagnosticTargetPolicy('stomp://broker.internal', []);
    expect(named({ host: 'Broker.Internal.', port: 61613 })).toBeUndefined();
    expect(named({ host: 'broker.internal', port: 6379 })).toBeDefined();
    const bracketed = diagnosticTargetPolicy('stomp+ssl://[::1]:61614', []);
    expect(bracketed({ host: '::1', port: 61614 })).toBeUndefined();
    expect(refusalOf(bracketed({ host: '::1', port: 61613 }), '::1')).toMatch(/loopback/);
  });

  it('opens other ports of the broker host only as the allow-list does', () => {
    const guardFor = diagnosticTargetPolicy('stomp://127.0.0.1:61613', ['127.0.0.0/8']);
    expect(refusalOf(guardFor({ host: '127.0.0.1', port: 22 }), '127.0.0.1')).toBeUndefined();
    expect(diagnosticTargetPolicy(undefined, [])({ host: '127.0.0.1', port: 61613 })).toBeDefined();
  });
});
