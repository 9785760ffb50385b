import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CircuitOpen, createCircuitBreakers } from './circuit-breakers.js';
import { egressPolicy } from './egress-policy.js';
import { createWebClient } from './web-client.js';

describe('circuit breakers by host', () => {
  it('opens after failures in a row, fails fast, lets one trial through when half open', () => {
    let clock = 1_000_000;
    const breakers = createCircuitBreakers({ failureThreshold: 3, openMs: 10_000, now: () => clock });
    for (let failure = 0; failure < 3; failure++) {
      breakers.admit('down.test');
      breakers.record('down.test', false);
    }
    expect(breakers.states()['down.test']).toEqual({
      state: 'open',
      consecutive_failures: 3,
      opened_at: new Date(clock).toISOString(),
    });
    expect(() => breakers.admit('down.test')).toThrow(CircuitOpen);
    expect(() => breakers.admit('up.test')).not.toThrow();
    clock += 10_000;
    expect(breakers.states()['down.test']?.state).toBe('half_open');
    breakers.admit('down.test'); // the trial
    expect(() => breakers.admit('down.test')).toThrow(/circuit open/);
    breakers.record('down.test', false); // the trial failed: open again
    expect(breakers.states()['down.test']).toMatchObject({ state: 'open', consecutive_failures: 4 });
    clock += 10_000;
    breakers.admit('down.test');
    breakers.release('down.test'); // the caller gave up: the next request may try
    breakers.admit('down.test');
    breakers.record('down.test', true);
    expect(breakers.states()).toEqual({});
  });

  it('does not open on failures that are not in a row', () => {
    const breakers = createCircuitBreakers({ failureThreshold: 2 });
    breakers.record('flaky.test', false);
    breakers.record('flaky.test', true);
    breakers.record('flaky.test', false);
    expect(breakers.states()['flaky.test']).toMatchObject({ state: 'closed', consecutive_failures: 1 });
  });
});

describe('the web client behind a circuit breaker', () => {
  let server: http.Server;
  let base: string;
  let hits = 0;
  beforeAll(async () => {
    server = http.createServer((request, response) => {
      hits++;
      if (request.url === '/robots.txt') return response.writeHead(404).end();
      if (request.url === '/large') return response.writeHead(200).end('x'.repeat(2000));
      response.writeHead(500).end('down');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('stops sending to a host that keeps failing, and counts an oversized answer as an answer', async () => {
    const breakers = createCircuitBreakers({ failureThreshold: 2 });
    const client = createWebClient({
      requestsPerSecond: 1000,
      obeyRobots: false,
      timeoutMs: 2000,
      maxBytes: 1000,
      maxRetries: 0,
      breakers,
      // The test server is on loopback, which the egress policy refuses unless allowed.
      egress: egressPolicy(['127.0.0.0/8']),
    });
    await expect(client.get(`${base}/large`)).rejects.toThrow(/over the limit/);
    expect(breakers.states()).toEqual({});
    expect((await client.get(`${base}/a`)).status).toBe(500);
    expect((await client.get(`${base}/b`)).status).toBe(500);
    const before = hits;
    await expect(client.get(`${base}/c`)).rejects.toThrow(CircuitOpen);
    expect(hits).toBe(before);
    expect(breakers.states()[new URL(base).host]).toMatchObject({ state: 'open', consecutive_failures: 2 });
  });
});
