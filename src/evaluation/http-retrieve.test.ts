/**
 * httpRetrieve against a real HTTP server on loopback: a search whose connection fails is sent
 * once more (searches change nothing), and a server that keeps failing, or an HTTP error, is
 * reported rather than retried for ever.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { httpRetrieve } from './http-retrieve.js';

const question = { id: 'q1', question: 'how are webhooks signed', expected: ['webhooks.html'] };
let server: Server | undefined;

afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A server that cuts the connection of the first `failures` requests, then answers. */
async function serve(failures: number, status = 200): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  server = createServer((request, response) => {
    requests += 1;
    if (requests <= failures) {
      request.socket.destroy();
      return;
    }
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(
      status === 200
        ? JSON.stringify({ results: [{ source: { url: 'file:///docs/webhooks.html' } }], took_ms: 3 })
        : JSON.stringify({ code: 'internal', detail: 'broken' }),
    );
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests: () => requests };
}

describe('httpRetrieve', () => {
  it('sends a search once more when its connection fails, and returns the answer', async () => {
    const { url, requests } = await serve(1);
    const retrieved = await httpRetrieve({ url, limit: 10 })('keyword', question);
    expect(retrieved.sources).toEqual([{ url: 'file:///docs/webhooks.html' }]);
    expect(requests()).toBe(2);
  });

  it('reports a connection that fails twice, after one retry', async () => {
    const { url, requests } = await serve(5);
    await expect(httpRetrieve({ url, limit: 10 })('rrf', question)).rejects.toThrow('fetch failed');
    expect(requests()).toBe(2);
  });

  it('does not retry an HTTP error: the server answered', async () => {
    const { url, requests } = await serve(0, 500);
    await expect(httpRetrieve({ url, limit: 10 })('vector', question)).rejects.toThrow('HTTP 500 internal');
    expect(requests()).toBe(1);
  });
});
