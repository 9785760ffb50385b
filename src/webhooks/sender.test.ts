import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAddressPolicy } from './address-policy.js';
import { createSender, SNIPPET_CHARS } from './sender.js';

// A receiver on loopback whose answer depends on the path.
let server: http.Server;
let base: string;
let hugeAnswerFinished: boolean | undefined;
beforeAll(async () => {
  server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      if (request.url === '/huge') {
        // 32 MB in 64 KB writes: far more than the sender reads, and than loopback buffers.
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.on('close', () => {
          hugeAnswerFinished = response.writableFinished;
        });
        const chunk = 'z'.repeat(64 * 1024);
        let left = 512;
        const write = () => {
          while (left > 0) {
            left--;
            if (!response.write(chunk)) return void response.once('drain', write);
          }
          response.end();
        };
        write();
      } else if (request.url === '/later') {
        response.writeHead(429, { 'retry-after': '120' }).end('slow down');
      } else if (request.url === '/headers') {
        response.writeHead(200).end(
          JSON.stringify({
            svc: request.headers['x-svc-signature'],
            timestamp: request.headers['webhook-timestamp'],
            standard: request.headers['webhook-signature'],
          }),
        );
      } else if (request.url === '/silent') {
        // Never answers.
      } else {
        response.writeHead(200).end(request.headers['x-svc-delivery']);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const request = (path: string) => ({
  url: `${base}${path}`,
  secret: 'sender-test-secret',
  deliveryId: 'd-1',
  eventType: 'execution.started',
  body: '{"id":"e-1"}',
  timestamp: new Date(),
});

describe('sender', () => {
  const sender = () =>
    createSender({ policy: createAddressPolicy(['127.0.0.0/8']), timeoutMs: 500, maxSockets: 4 });

  it('cuts a huge answer short, keeps its snippet, and sends again afterwards', async () => {
    // Not the 500 ms deadline of the others: this first request loads undici and connects, and
    // on a loaded machine that alone took longer (the deadline has a test of its own below).
    const send = createSender({
      policy: createAddressPolicy(['127.0.0.0/8']),
      timeoutMs: 10_000,
      maxSockets: 4,
    });
    const huge = await send.send(request('/huge'));
    expect(huge.outcome).toEqual({ kind: 'response', status: 200, retryAfter: undefined });
    expect(huge.snippet).toBe('z'.repeat(SNIPPET_CHARS));
    // The connection was dropped rather than the answer read to its end.
    await expect.poll(() => hugeAnswerFinished).toBe(false);
    const next = await send.send(request('/ok'));
    expect(next.outcome).toMatchObject({ kind: 'response', status: 200 });
    expect(next.snippet).toBe('d-1');
    send.close();
  });

  it('reads Retry-After', async () => {
    const send = sender();
    const result = await send.send(request('/later'));
    expect(result.outcome).toEqual({ kind: 'response', status: 429, retryAfter: '120' });
    expect(result.snippet).toBe('slow down');
    send.close();
  });

  it('gives up at the deadline when no answer comes', async () => {
    const send = sender();
    const result = await send.send(request('/silent'));
    expect(result.outcome).toEqual({ kind: 'timeout' });
    expect(result.error).toBe('no answer within 500 ms');
    expect(result.durationMs).toBeGreaterThanOrEqual(490);
    send.close();
  });

  it('ends an attempt whose header undici refuses as a network error, and sends the next', async () => {
    const send = sender();
    // A line break in a header value: undici refuses the request, and tells the exchange.
    const refused = await send.send({ ...request('/ok'), eventType: 'execution.started\r\nx-evil: 1' });
    expect(refused.outcome).toEqual({ kind: 'network_error' });
    expect(refused.error).toMatch(/header/i);
    const next = await send.send(request('/ok'));
    expect(next.outcome).toMatchObject({ kind: 'response', status: 200 });
    send.close();
  });

  it('sends signatures made ahead as they are, with their signing time', async () => {
    const send = sender();
    const signed = {
      svc: 'sha256=ab',
      standard: 'v1,cd',
      seconds: 1_900_000_000,
      secret: 'sender-test-secret',
    };
    const result = await send.send({ ...request('/headers'), signed });
    expect(JSON.parse(result.snippet ?? '')).toEqual({
      svc: 'sha256=ab',
      timestamp: '1900000000',
      standard: 'v1,cd',
    });
    send.close();
  });
});

describe('sender address policy at connect time', () => {
  // hooks.test resolves to the loopback receiver without DNS.
  const lookup = async (hostname: string) =>
    hostname === 'hooks.test' ? [{ address: '127.0.0.1', family: 4 }] : [];
  const named = (path: string) => ({ ...request(path), url: base.replace('127.0.0.1', 'hooks.test') + path });

  it('refuses a name that resolves to a refused address, without a request', async () => {
    let requests = 0;
    const counted = () => requests++;
    server.on('request', counted);
    const send = createSender({ policy: createAddressPolicy([]), timeoutMs: 500, maxSockets: 1, lookup });
    const result = await send.send(named('/ok'));
    server.off('request', counted);
    expect(result.outcome).toEqual({ kind: 'network_error' });
    expect(result.error).toMatch(/webhook target hooks\.test refused: 127\.0\.0\.1 is a loopback address/);
    expect(requests).toBe(0);
    send.close();
  });

  it('connects when the range is allow-listed', async () => {
    const send = createSender({
      policy: createAddressPolicy(['127.0.0.0/8']),
      timeoutMs: 500,
      maxSockets: 1,
      lookup,
    });
    const result = await send.send(named('/ok'));
    expect(result.outcome).toMatchObject({ kind: 'response', status: 200 });
    send.close();
  });
});
