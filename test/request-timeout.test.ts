/**
 * A client that sends its request a byte at a time is cut off once the request timeout passes
 * (issue 17 item 6): a real listening server and a raw socket, since `inject` has no wire.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuiltinRegistry } from '../src/adapters/builtin.js';
import { buildApp } from '../src/app.js';
import { loadSettings } from '../src/settings.js';

describe('request timeout', () => {
  let app: Awaited<ReturnType<typeof buildApp>>;
  let port: number;
  beforeAll(async () => {
    app = await buildApp({
      settings: loadSettings({ WEIR_REQUEST_TIMEOUT_MS: '500' }),
      registry: createBuiltinRegistry(),
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    await app?.close();
  });

  it('answers 408 and closes a connection whose body trickles in past the timeout', async () => {
    const socket = net.connect({ host: '127.0.0.1', port });
    await new Promise((resolve) => socket.once('connect', resolve));
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
    });
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write(
      'POST /api/v1/adapters/synthetic_sink/validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
    );
    // One byte every 200 ms: the 100 bytes would take 20 s.
    const trickle = setInterval(() => {
      if (!socket.destroyed) socket.write(' ');
    }, 200);
    await closed;
    clearInterval(trickle);
    // The server gave up first: a 408, long before the 20 s the trickle needs.
    expect(received).toMatch(/^HTTP\/1\.1 408/);
    // The catalogue's body, not Fastify's own {error, message, statusCode}.
    expect(JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4))).toMatchObject({
      code: 'request_timeout',
    });
  });

  it('answers 431 request_header_too_large to headers over the parser limit', async () => {
    const answer = await rawExchange(
      port,
      `GET /api/v1/system/version HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 431/);
    expect(answer).toContain('"code":"request_header_too_large"');
  });

  it('answers 400 bad_request to bytes that are not HTTP, and goes on serving', async () => {
    const answer = await rawExchange(port, 'HELLO THERE\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
    expect(answer).toContain('"code":"bad_request"');
    expect((await fetch(`http://127.0.0.1:${port}/api/v1/system/health`)).status).toBe(200);
  });

  it('still serves a request that arrives in time', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/system/version`);
    expect(response.status).toBe(200);
  });
});

/** Sends `request` on a fresh socket and returns everything received until the server closes it. */
async function rawExchange(port: number, request: string): Promise<string> {
  const socket = net.connect({ host: '127.0.0.1', port });
  let received = '';
  socket.on('data', (chunk) => {
    received += chunk.toString('latin1');
  });
  const closed = new Promise((resolve) => socket.once('close', resolve));
  socket.on('error', () => {}); // a reset after the answer is the server closing, as asked
  socket.write(request);
  await closed;
  return received;
}
