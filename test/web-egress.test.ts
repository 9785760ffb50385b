/**
 * The web fetchers' egress policy (issue 17, item 4) against real HTTP servers on loopback.
 * A "public" site listens on 127.0.0.2 and is the only address allowed; the "internal" service
 * listens on 127.0.0.1 (as the API itself would). A page redirecting to the internal service
 * must not reach it: loopback, link-local and metadata addresses are refused at connect time,
 * on every redirect hop, unless WEIR_FETCH_ALLOWED_CIDRS allows them. Nothing here connects
 * off this machine: the metadata case resolves a name through an injected resolver.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { buildConnector } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectOutputs, createAdapterTestKit } from '../src/adapters/adapter-testing.js';
import { sitemapParser } from '../src/adapters/web/sitemap-parser.js';
import { webScraper } from '../src/adapters/web/web-scraper.js';
import { egressPolicy } from '../src/http/egress-policy.js';
import { createWebClient } from '../src/http/web-client.js';
import { chromiumPath, needsChromium } from './helpers/chromium.js';

interface Server {
  base: string;
  requests: string[];
  close(): Promise<void>;
}

async function serve(host: string, handler: http.RequestListener): Promise<Server> {
  const requests: string[] = [];
  const server = http.createServer((request, response) => {
    requests.push(request.url ?? '');
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    base: `http://${host}:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let internal: Server;
let site: Server;
let otherHost: Server;

beforeAll(async () => {
  internal = await serve('127.0.0.1', (_request, response) => {
    response.setHeader('content-type', 'text/html');
    response.end('<html><body>internal secret: version 1.2.3</body></html>');
  });
  const internalPort = new URL(internal.base).port;
  otherHost = await serve('127.0.0.1', (_request, response) => {
    response.setHeader('content-type', 'application/xml');
    response.end(
      '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://127.0.0.2/a</loc></url></urlset>',
    );
  });
  site = await serve('127.0.0.2', (request, response) => {
    const redirects: Record<string, string> = {
      '/to-localhost': `http://localhost:${internalPort}/api/v1/system/version`,
      '/to-loopback-literal': `http://127.0.0.1:${internalPort}/api/v1/system/version`,
      '/to-mapped-loopback': `http://[::ffff:127.0.0.1]:${internalPort}/`,
      // metadata.test resolves to the metadata address only through the injected resolver below.
      '/to-metadata': 'http://metadata.test/latest/meta-data/',
      '/hop': '/to-localhost',
      '/sitemap-elsewhere.xml': `${otherHost.base}/sitemap.xml`,
    };
    const location = redirects[request.url ?? ''];
    if (location) {
      response.writeHead(302, { location });
      response.end();
      return;
    }
    if (request.url === '/exfil') {
      // A hostile page: its script and image point at the internal service.
      response.setHeader('content-type', 'text/html');
      response.end(
        `<html><body><p id="out">public</p><img src="http://127.0.0.1:${internalPort}/pixel">` +
          `<script>fetch('http://localhost:${internalPort}/api/v1/system/version').then((r) => r.text())` +
          `.then((t) => { document.getElementById('out').textContent = t; }).catch(() => {});</script></body></html>`,
      );
      return;
    }
    if (request.url === '/robots.txt') {
      response.writeHead(404);
      response.end();
      return;
    }
    response.setHeader('content-type', 'text/html');
    response.end('<html><body>public page</body></html>');
  });
});
afterAll(async () => {
  await Promise.all([internal?.close(), site?.close(), otherHost?.close()]);
});

const configOf = (adapter: { config: TSchema }, config: object = {}) =>
  Value.Default(adapter.config, structuredClone(config)) as never;

async function scrape(allowed: string[], url: string) {
  const kit = await createAdapterTestKit({ settings: { fetch_allowed_cidrs: allowed } });
  try {
    const handler = webScraper.create(
      configOf(webScraper, { rate_limit: 100, max_retries: 0 }),
      kit.resources,
    );
    return collectOutputs(await handler({ url }, kit.context()));
  } finally {
    await kit.close();
  }
}

describe('web fetcher egress policy', () => {
  it('fetches the allowed public site', async () => {
    const [page] = await scrape(['127.0.0.2/32'], `${site.base}/page`);
    expect(page?.payload.html).toContain('public page');
  });

  it.each([
    ['/to-localhost', /localhost refused: .*loopback.*WEIR_FETCH_ALLOWED_CIDRS/],
    ['/hop', /localhost refused: .*loopback/],
    ['/to-loopback-literal', /127\.0\.0\.1 refused: .*loopback/],
    ['/to-mapped-loopback', /refused: .*loopback/],
  ])('refuses a redirect (%s) into an internal address without reaching it', async (path, reason) => {
    const before = internal.requests.length;
    await expect(scrape(['127.0.0.2/32'], `${site.base}${path}`)).rejects.toThrow(reason);
    expect(internal.requests.length).toBe(before);
  });

  it('refuses a redirect to a name resolving to cloud metadata, decided without connecting', async () => {
    // No test connects off this machine (issue 30, item 8): the resolver is injected, and the
    // connection step dials loopback only, recording anything else instead of dialling it.
    const dialledElsewhere: string[] = [];
    const loopbackOnly = buildConnector({});
    const client = createWebClient({
      requestsPerSecond: 100,
      obeyRobots: true,
      timeoutMs: 2000,
      maxBytes: 100_000,
      maxRetries: 0,
      egress: egressPolicy(['127.0.0.2/32'], {
        lookup: async (name) => (name === 'metadata.test' ? [{ address: '169.254.169.254', family: 4 }] : []),
        connect: (options, callback) => {
          if (options.hostname.startsWith('127.')) return loopbackOnly(options, callback);
          dialledElsewhere.push(options.hostname);
          callback(new Error('the test connector dials loopback only'), null);
        },
      }),
    });
    await expect(client.get(`${site.base}/to-metadata`)).rejects.toThrow(
      /metadata\.test refused: 169\.254\.169\.254 is a cloud metadata address/,
    );
    expect(dialledElsewhere).toEqual([]);
  });

  it('refuses loopback by default, also the first request and robots.txt', async () => {
    const before = site.requests.length;
    await expect(scrape([], `${site.base}/page`)).rejects.toThrow(/127\.0\.0\.2 refused: .*loopback/);
    expect(site.requests.length).toBe(before);
  });

  it('follows the same redirect once the setting allows the address', async () => {
    const [page] = await scrape(['127.0.0.0/8', '::1/128'], `${site.base}/to-localhost`);
    expect(page?.payload.html).toContain('internal secret');
  });
});

describe('sitemap_parser same_host_only on redirects', () => {
  async function parse(config: object) {
    const kit = await createAdapterTestKit({ settings: { fetch_allowed_cidrs: ['127.0.0.0/8'] } });
    try {
      const handler = sitemapParser.create(
        configOf(sitemapParser, { rate_limit: 100, ...config }),
        kit.resources,
      );
      return collectOutputs(await handler({ url: `${site.base}/sitemap-elsewhere.xml` }, kit.context()));
    } finally {
      await kit.close();
    }
  }

  it('refuses a sitemap redirected to another host', async () => {
    const before = otherHost.requests.length;
    await expect(parse({})).rejects.toThrow(
      /redirect from 127\.0\.0\.2:\d+ to another host .* same_host_only/,
    );
    expect(otherHost.requests.length).toBe(before);
  });

  it('follows it when same_host_only is off', async () => {
    const [output] = await parse({ same_host_only: false });
    expect(output?.payload.urls).toEqual(['http://127.0.0.2/a']);
  });
});

describe('web_crawler egress policy in Chromium', needsChromium, () => {
  // Imported here so the other tests do not load playwright-core.
  const crawlerModule = import('../src/adapters/web/web-crawler.js');
  afterAll(async () => {
    await (await import('../src/browser/chromium.js')).closeBrowser();
  });

  async function crawl(url: string) {
    const kit = await createAdapterTestKit({
      settings: { fetch_allowed_cidrs: ['127.0.0.2/32'], chromium_path: chromiumPath },
    });
    try {
      const { webCrawler } = await crawlerModule;
      const handler = webCrawler.create(
        configOf(webCrawler, { rate_limit: 100, max_retries: 0, request_timeout: 10 }),
        kit.resources,
      );
      return collectOutputs(await handler({ url }, kit.context()));
    } finally {
      await kit.close();
    }
  }

  it('refuses a navigation redirected into a loopback address', async () => {
    const before = internal.requests.length;
    await expect(crawl(`${site.base}/to-localhost`)).rejects.toThrow(/localhost refused: .*loopback/);
    expect(internal.requests.length).toBe(before);
  });

  it("keeps the page's own requests (scripts, images) away from internal addresses", async () => {
    const before = internal.requests.length;
    const [page] = await crawl(`${site.base}/exfil`);
    expect(page?.payload.html).toContain('id="out">public<');
    expect(page?.payload.html).not.toContain('internal secret');
    expect(internal.requests.length).toBe(before);
  });
});
