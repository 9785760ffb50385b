/**
 * Issue 30, items 3 and 4: what a hostile web page can no longer do to the service.
 * - Every answer carries nosniff, no framing and a Content-Security-Policy (the console's, the
 *   API docs' or one that allows nothing), event streams and router errors included.
 * - Stored objects of an active type (crawled HTML, SVG, XML, script, PDF) are attachments and
 *   every stored object is sandboxed, so one opened from the storage API runs nothing.
 * - Host names the service does not serve get 421 (DNS rebinding), on a real server too.
 * - State-changing requests a browser marks as cross-site get 403 (CSRF); curl-like ones pass.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadSettings } from '../src/settings.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { databaseTargets } from './helpers/databases.js';

async function appWith(environment: Record<string, string> = {}): Promise<FastifyInstance> {
  return buildApp({ settings: loadSettings({ WEIR_PIPELINES_DIR: '', ...environment }) });
}

function expectBrowserHeaders(headers: Record<string, unknown>) {
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['x-frame-options']).toBe('DENY');
  expect(String(headers['content-security-policy'])).toContain("frame-ancestors 'none'");
}

describe('headers on every answer', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await appWith();
  });
  afterAll(() => app.close());

  it('API answers, 404s, errors and router errors say nosniff, refuse framing and allow nothing', async () => {
    for (const url of [
      '/api/v1/system/version',
      '/api/v1/no-such-endpoint',
      '/api/v1/storage/objects/a.html', // 503: no storage
      '/api/v1/configs/%E0%A4%A', // the router's bad percent-encoding, answered before any hook
      '/openapi.json',
    ]) {
      const response = await app.inject({ method: 'GET', url });
      expectBrowserHeaders(response.headers);
      expect(response.headers['content-security-policy'], url).toContain("default-src 'none'");
    }
  });

  it('the console gets a strict policy: its own script files only, no inline script', async () => {
    for (const url of ['/', '/console/app.js']) {
      const response = await app.inject({ method: 'GET', url });
      expectBrowserHeaders(response.headers);
      const policy = String(response.headers['content-security-policy']);
      expect(policy).toContain("script-src 'self'");
      expect(policy).not.toContain('unsafe-inline');
      expect(policy).not.toContain('unsafe-eval');
      expect(policy).toContain("object-src 'none'");
    }
  });

  it('the API docs get a policy Swagger UI works under: script files from the origin only', async () => {
    const page = await app.inject({ method: 'GET', url: '/docs' });
    expect(page.statusCode).toBe(200);
    expectBrowserHeaders(page.headers);
    const policy = String(page.headers['content-security-policy']);
    expect(policy).toMatch(/script-src 'self'(;|$)/);
    // Swagger UI loads everything from files: no inline <script> in its page.
    expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const script = await app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    expect(script.statusCode).toBe(200);
    expectBrowserHeaders(script.headers);
  });
});

describe('Host check (DNS rebinding)', () => {
  it('answers 421 host_not_allowed for a name it does not serve, before the key check', async () => {
    const app = await appWith({ WEIR_API_KEYS: 'k'.repeat(20) });
    try {
      for (const url of ['/api/v1/system/config', '/api/v1/system/health', '/']) {
        const response = await app.inject({ method: 'GET', url, headers: { host: 'attacker.example' } });
        expect(response.statusCode, url).toBe(421);
        expect(response.json()).toMatchObject({ code: 'host_not_allowed' });
        expectBrowserHeaders(response.headers);
      }
    } finally {
      await app.close();
    }
  });

  it('bound to loopback: localhost and the loopback addresses, any port; nothing else', async () => {
    const app = await appWith({ HOST: '127.0.0.1' });
    try {
      const status = async (host: string) =>
        (await app.inject({ method: 'GET', url: '/api/v1/system/version', headers: { host } })).statusCode;
      for (const host of [
        'localhost',
        'localhost:8080',
        'LOCALHOST.:1',
        '127.0.0.1:9',
        '[::1]:8080',
        '[::1]',
      ])
        expect(await status(host), host).toBe(200);
      for (const host of [
        'attacker.example',
        'attacker.example:8080',
        '127.0.0.1.attacker.example',
        '10.0.0.5',
      ])
        expect(await status(host), host).toBe(421);
    } finally {
      await app.close();
    }
  });

  it('answers the bound address and WEIR_ALLOWED_HOSTS; bound to every address, any IP literal', async () => {
    const bound = await appWith({ HOST: '10.0.0.5', WEIR_ALLOWED_HOSTS: 'weir.example.com, Other.Example' });
    const everywhere = await appWith({ HOST: '0.0.0.0' });
    try {
      const status = async (app: FastifyInstance, host: string) =>
        (await app.inject({ method: 'GET', url: '/api/v1/system/version', headers: { host } })).statusCode;
      for (const host of [
        '10.0.0.5:8080',
        'weir.example.com',
        'WEIR.example.com:443',
        'other.example',
        'localhost',
      ])
        expect(await status(bound, host), host).toBe(200);
      for (const host of ['127.0.0.1', '10.0.0.6', 'example.com', 'sub.weir.example.com'])
        expect(await status(bound, host), host).toBe(421);
      for (const host of ['10.1.2.3:8080', '[fe80::1]:8080', '127.0.0.1', 'localhost'])
        expect(await status(everywhere, host), host).toBe(200);
      for (const host of ['attacker.example', 'weir.example.com'])
        expect(await status(everywhere, host), host).toBe(421);
    } finally {
      await bound.close();
      await everywhere.close();
    }
  });

  it('on a real server, a raw Host header of a foreign name gets 421 and its own address 200', async () => {
    const app = await appWith({ HOST: '127.0.0.1' });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    const get = (host: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const request = http.request(
          { host: '127.0.0.1', port, path: '/api/v1/system/config', headers: { host } },
          (response) => {
            let body = '';
            response.setEncoding('utf8');
            response.on('data', (chunk) => {
              body += chunk;
            });
            response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
          },
        );
        request.on('error', reject);
        request.end();
      });
    try {
      const foreign = await get('attacker.example');
      expect(foreign.status).toBe(421);
      expect(JSON.parse(foreign.body)).toMatchObject({ code: 'host_not_allowed' });
      expect((await get(`127.0.0.1:${port}`)).status).not.toBe(421);
      expect((await get(`localhost:${port}`)).status).not.toBe(421);
    } finally {
      await app.close();
    }
  });
  it('the answer written on the socket to bytes that are not HTTP says nosniff too', async () => {
    const app = await appWith();
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    try {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.write('NOT HTTP AT ALL\r\n\r\n'));
        let text = '';
        socket.setEncoding('utf8');
        socket.on('data', (chunk) => {
          text += chunk;
        });
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 400/);
      expect(answer).toMatch(/\r\nX-Content-Type-Options: nosniff\r\n/i);
    } finally {
      await app.close();
    }
  });
});

describe('cross-site check (CSRF)', () => {
  let app: FastifyInstance;
  let proxied: FastifyInstance;
  beforeAll(async () => {
    app = await appWith();
    proxied = await appWith({ WEIR_ALLOWED_HOSTS: 'weir.example.com' });
  });
  afterAll(async () => {
    await app.close();
    await proxied.close();
  });

  const send = (
    target: FastifyInstance,
    method: 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'GET',
    headers: Record<string, string>,
    url = '/api/v1/system/reload',
  ) => target.inject({ method, url, headers: { host: 'localhost:8080', ...headers } });

  it('refuses a state-changing request a browser marks as from another site or origin', async () => {
    const refused: Record<string, string>[] = [
      { 'sec-fetch-site': 'cross-site' },
      // Same site is another port or subdomain: a dev server on localhost:3000 is same-site.
      { 'sec-fetch-site': 'same-site' },
      { origin: 'http://attacker.example' },
      { origin: 'null' },
      { origin: 'http://localhost:3000' },
      { origin: 'http://localhost' },
      { origin: 'file://' },
      { origin: 'http://localhost:8080', 'sec-fetch-site': 'cross-site' },
    ];
    for (const headers of refused) {
      const response = await send(app, 'POST', headers);
      expect(response.statusCode, JSON.stringify(headers)).toBe(403);
      expect(response.json()).toMatchObject({ code: 'cross_site_request_refused' });
    }
    for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
      const response = await send(app, method, { origin: 'http://attacker.example' }, '/api/v1/templates/x');
      expect(response.statusCode, method).toBe(403);
    }
  });

  it('takes requests without those headers (curl, SDKs, the CLI), its own pages and reads', async () => {
    const taken: Record<string, string>[] = [
      {},
      { origin: 'http://localhost:8080', 'sec-fetch-site': 'same-origin' },
      { origin: 'http://LOCALHOST:8080' },
      { 'sec-fetch-site': 'none' },
    ];
    for (const headers of taken) {
      const response = await send(app, 'POST', headers);
      expect(response.statusCode, JSON.stringify(headers)).not.toBe(403);
    }
    // inject's own Host (localhost:80) against an Origin on the default port.
    const defaultPort = await app.inject({
      method: 'POST',
      url: '/api/v1/system/reload',
      headers: { origin: 'http://localhost' },
    });
    expect(defaultPort.statusCode).not.toBe(403);
    // Reading is not refused: without CORS headers another page cannot read the answer anyway.
    const read = await send(
      app,
      'GET',
      { origin: 'http://attacker.example', 'sec-fetch-site': 'cross-site' },
      '/api/v1/system/version',
    );
    expect(read.statusCode).toBe(200);
  });

  it('behind a proxy that rewrites Host, an Origin on a WEIR_ALLOWED_HOSTS name is the service itself', async () => {
    const own = await send(proxied, 'POST', { host: '127.0.0.1:8080', origin: 'https://weir.example.com' });
    expect(own.statusCode).not.toBe(403);
    const sibling = await send(proxied, 'POST', {
      host: '127.0.0.1:8080',
      origin: 'https://app.example.com',
    });
    expect(sibling.statusCode).toBe(403);
  });
});

describe.each(databaseTargets())('stored objects and streams on $name', (target) => {
  let test: TestApp;
  beforeAll(async () => {
    test = await createTestApp(target);
  });
  afterAll(() => test?.close());

  const active: [string, string][] = [
    ['page.html', 'text/html; charset=utf-8'],
    ['upper.html', 'TEXT/HTML'],
    ['image.svg', 'image/svg+xml'],
    ['feed.xml', 'application/xml'],
    ['page.xhtml', 'application/xhtml+xml'],
    ['script.js', 'text/javascript'],
    ['paper.pdf', 'application/pdf'],
    ['odd.bin', 'application/x-unknown'],
  ];
  const passive: [string, string][] = [
    ['notes.md', 'text/markdown'],
    ['notes.txt', 'text/plain; charset=utf-8'],
    ['data.json', 'application/json'],
    ['picture.png', 'image/png'],
    // A key ending .html stored as text: nosniff keeps it text.
    ['looks.html', 'text/plain'],
  ];

  it('serves active types as attachments and every stored object sandboxed, on all three routes', async () => {
    const body = '<img src=x onerror="fetch(`/api/v1/system/config`)">';
    for (const [name, contentType] of [...active, ...passive]) {
      const key = `guards/folder/${name}`;
      await test.storage.put(key, body, { contentType, metadata: {} });
      for (const url of [
        `/api/v1/storage/objects/${key}`,
        `/api/v1/storage/objects/${encodeURIComponent(key)}`,
      ]) {
        for (const headers of [{}, { range: 'bytes=0-9' }]) {
          const response = await test.app.inject({ method: 'GET', url, headers });
          expect(response.statusCode, url).toBe('range' in headers ? 206 : 200);
          expectBrowserHeaders(response.headers);
          expect(response.headers['content-security-policy'], url).toMatch(/^sandbox; default-src 'none'/);
          const disposition = response.headers['content-disposition'];
          if (active.some(([activeName]) => activeName === name))
            expect(disposition, `${url} ${contentType}`).toBe(
              `attachment; filename="${name}"; filename*=UTF-8''${name}`,
            );
          else expect(disposition, `${url} ${contentType}`).toBeUndefined();
        }
      }
    }
  });

  it('names an attachment with a non-ASCII key safely', async () => {
    const key = 'guards/Ünïcode "quoted".html';
    await test.storage.put(key, '<p>x</p>', { contentType: 'text/html', metadata: {} });
    const response = await test.app.inject({
      method: 'GET',
      url: `/api/v1/storage/objects/${encodeURIComponent(key)}`,
    });
    expect(response.headers['content-disposition']).toBe(
      `attachment; filename="_n_code _quoted_.html"; filename*=UTF-8''%C3%9Cn%C3%AFcode%20%22quoted%22.html`,
    );
  });

  it('event streams, which write their own head, carry the headers too', async () => {
    const response = await test.app.inject({
      method: 'POST',
      url: '/api/v1/chat/stream',
      payload: { query: 'anything' },
    });
    expect(response.headers['content-type']).toContain('text/event-stream');
    expectBrowserHeaders(response.headers);
  });
});
