/**
 * A small, deterministic web site on 127.0.0.1 for the web adapter tests: static pages from
 * test/fixtures/site/ plus coded routes for everything a crawler must cope with (robots.txt,
 * sitemap indexes with nested and gzipped sitemaps, 404/410, a 429 with Retry-After, redirect
 * chains and loops, a windows-1252 page, an oversized page, binary served as HTML, a slow
 * answer, a malformed sitemap and XML bombs, PDFs). Those routes are in test-site-routes.ts.
 */
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pageRoutes, send, sitemapRoutes, siteRoot } from './test-site-routes.js';

export { LARGE_PAGE_BYTES, SAMPLE_PDF, siteRoot } from './test-site-routes.js';

export interface TestSite {
  baseUrl: string;
  /** Path and query of every request served, in order. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * The site is on loopback, which the web fetchers' egress policy refuses by default: tests
 * that fetch from it allow it explicitly with these settings (WEIR_FETCH_ALLOWED_CIDRS).
 */
export const LOOPBACK_FETCH = { fetch_allowed_cidrs: ['127.0.0.0/8', '::1/128'] };

const staticTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.pdf': 'application/pdf',
  '.json': 'application/json',
};

export async function startTestSite(): Promise<TestSite> {
  const requests: string[] = [];
  const hits = new Map<string, number>();
  let baseUrl = '';

  const routes = { ...sitemapRoutes(() => baseUrl), ...pageRoutes(listPdfFixtures()) };

  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://site.test');
    requests.push(url.pathname + url.search);
    const count = (hits.get(url.pathname) ?? 0) + 1;
    hits.set(url.pathname, count);
    void (async () => {
      // Every /throttled/<name> answers 429 (Retry-After: 1) the first time, then 200.
      if (url.pathname.startsWith('/throttled/')) {
        if (count === 1) {
          response.writeHead(429, { 'retry-after': '1', 'content-type': 'text/plain' });
          response.end('slow down');
          return;
        }
        send(
          response,
          200,
          'text/html; charset=utf-8',
          `<html><head><title>Throttled</title></head><body><main><p>Served on attempt ${count}.</p></main></body></html>`,
        );
        return;
      }
      const route = routes[url.pathname];
      if (route) return route(response, url.pathname);
      return serveStatic(response, url.pathname);
    })().catch((error) => {
      if (!response.headersSent) send(response, 500, 'text/plain', String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

async function serveStatic(response: http.ServerResponse, pathname: string): Promise<void> {
  const relative = path.posix.normalize(decodeURIComponent(pathname)).replace(/^\/+/, '');
  const file = path.join(siteRoot, relative);
  if (!file.startsWith(siteRoot) || relative === '' || relative.startsWith('..')) {
    return send(response, 404, 'text/html', '<h1>Not found</h1>');
  }
  try {
    const body = await readFile(file);
    send(response, 200, staticTypes[path.extname(file)] ?? 'application/octet-stream', body);
  } catch {
    send(response, 404, 'text/html', '<h1>Not found</h1>');
  }
}

/** PDF fixtures another test suite adds under files/; none yet is fine. */
function listPdfFixtures(): string[] {
  try {
    return readdirSync(path.join(siteRoot, 'files'))
      .filter((name) => name.endsWith('.pdf'))
      .sort();
  } catch {
    return [];
  }
}
