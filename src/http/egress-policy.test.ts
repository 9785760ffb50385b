import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { egressPolicy } from './egress-policy.js';
import { EgressRefused, fetchOnce } from './fetch-once.js';

describe('egress policy of the web fetchers', () => {
  const policy = egressPolicy([]);

  it.each([
    '127.0.0.1',
    '::1',
    '169.254.169.254',
    '169.254.10.10',
    'fe80::1',
    'fd00:ec2::254',
    '100.100.100.200',
    '0.0.0.0',
    '::127.0.0.1',
    '::ffff:127.0.0.1',
    '64:ff9b::a9fe:a9fe',
    '224.0.0.1',
  ])('refuses %s by default', (address) => {
    expect(policy.guard.refusal(address)).toMatch(/WEIR_FETCH_ALLOWED_CIDRS/);
  });

  it.each([
    '8.8.8.8',
    '10.0.0.5',
    '172.16.3.4',
    '192.168.1.10',
    '100.64.1.1',
    'fd12:3456::1',
  ])('lets intranet and public %s through', (address) => {
    expect(policy.guard.refusal(address)).toBeUndefined();
  });

  it('opens what the setting lists, and shares one policy per list', () => {
    const open = egressPolicy(['127.0.0.0/8']);
    expect(open.guard.refusal('127.0.0.1')).toBeUndefined();
    expect(open.guard.refusal('169.254.169.254')).toBeDefined();
    expect(egressPolicy(['127.0.0.0/8'])).toBe(open);
    expect(() => egressPolicy(['localhost'])).toThrow('WEIR_FETCH_ALLOWED_CIDRS');
  });

  it('answers the same for a URL asked about again (the answers are remembered per host)', () => {
    const closed = egressPolicy([]);
    for (let round = 0; round < 2; round++) {
      expect(closed.refusal(new URL('http://127.0.0.1:8080/hook'))).toMatch(
        /^fetch from 127\.0\.0\.1 refused: /,
      );
      expect(closed.refusal(new URL('http://[::1]/a'))).toMatch(/^fetch from \[::1\] refused: /);
      expect(closed.refusal(new URL('http://8.8.8.8/hook'))).toBeUndefined();
      // Names are checked when connecting, not here.
      expect(closed.refusal(new URL('http://localhost/hook'))).toBeUndefined();
    }
    expect(egressPolicy(['127.0.0.0/8']).refusal(new URL('http://127.0.0.1:8080/hook'))).toBeUndefined();
  });
});

describe('fetchOnce under the egress policy', () => {
  let server: http.Server;
  let port: number;
  let hits = 0;
  beforeAll(async () => {
    server = http.createServer((_request, response) => {
      hits++;
      response.end('reached');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const get = (url: string, allowed: string[]) =>
    fetchOnce(new URL(url), {
      userAgent: 't',
      timeoutMs: 2000,
      maxBytes: 1000,
      egress: egressPolicy(allowed),
    });

  it('refuses a literal loopback host before connecting, and a name resolving to it when connecting', async () => {
    await expect(get(`http://127.0.0.1:${port}/`, [])).rejects.toThrow(EgressRefused);
    await expect(get(`http://localhost:${port}/`, [])).rejects.toThrow(/localhost refused: .*loopback/);
    expect(hits).toBe(0);
  });

  it('connects when the setting allows loopback', async () => {
    const response = await get(`http://localhost:${port}/`, ['127.0.0.0/8', '::1/128']);
    expect(response.body.toString()).toBe('reached');
  });
});
