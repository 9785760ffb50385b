import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type StompDouble, startStompDouble } from '../../../test/helpers/stomp-double.js';
import { diagnosticAddressGuard, runStompDiagnostic } from './diagnostic.js';

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
    const result = await runStompDiagnostic({ ...base(), host, guard: diagnosticAddressGuard([]) });
    expect(result.success).toBe(false);
    expect(result.steps[0]).toMatchObject({
      phase: 'dns',
      status: 'failed',
      detail: expect.stringMatching(reason),
    });
    expect(statuses(result.steps)).toMatchObject({ tcp: 'skipped', stomp_connect: 'skipped' });
    expect(server.connections()).toBe(0);
  });
});
