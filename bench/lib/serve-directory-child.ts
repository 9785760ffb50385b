/**
 * The child process of serve-directory.ts: serves the directory named in argv (the page limit
 * and the withheld page after it) and tells its parent the address, the pages and, when asked
 * to close, the CPU it spent. Run only through serveDirectory.
 */
import { readdir, readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

export type ChildMessage =
  | { type: 'listening'; baseUrl: string; pages: string[] }
  | { type: 'closed'; cpuSeconds: number };

/**
 * `pages` are paths relative to `directory` (`en/index.html`), in subfolders too. `limit` keeps
 * the first pages by file name, then folder, in the sitemap, for shorter runs: with a folder per
 * language, a short run holds the same pages in every language, not only the first folder's.
 * `withhold`: a page listed in the sitemap that answers 404 (a bench's deliberate break).
 */
async function serve(directory: string, limit: number, withhold: string | undefined): Promise<void> {
  const root = path.resolve(directory);
  const pages = (await readdir(root, { recursive: true }))
    .filter((name) => name.endsWith('.html'))
    .map((name) => name.split(path.sep).join('/'))
    .sort(byFileNameThenFolder)
    .slice(0, limit)
    .sort();
  let baseUrl = '';
  const server: Server = createServer(async (request, response) => {
    const pathname = decodeURIComponent(new URL(request.url ?? '/', 'http://localhost').pathname);
    if (pathname === '/sitemap.xml') {
      const entries = pages.map((page) => `<url><loc>${baseUrl}/${page}</loc></url>`).join('\n');
      response.writeHead(200, { 'content-type': 'application/xml' });
      response.end(
        `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${entries}\n</urlset>\n`,
      );
      return;
    }
    if (pathname === '/robots.txt') {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end(`User-agent: *\nAllow: /\nSitemap: ${baseUrl}/sitemap.xml\n`);
      return;
    }
    const file = path.join(root, pathname);
    if (!file.startsWith(root + path.sep) || (withhold && pathname === `/${withhold}`)) {
      response.writeHead(404).end();
      return;
    }
    try {
      const body = await readFile(file);
      const type = file.endsWith('.html')
        ? 'text/html; charset=utf-8'
        : file.endsWith('.css')
          ? 'text/css'
          : 'application/octet-stream';
      response.writeHead(200, { 'content-type': type, 'content-length': body.length });
      response.end(body);
    } catch {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  server.keepAliveTimeout = 30_000;
  await listenOnCorpusPort(server);
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const send = (message: ChildMessage) => process.send?.(message);
  send({ type: 'listening', baseUrl, pages });
  process.on('message', (message: unknown) => {
    if (message !== 'close') return;
    server.closeAllConnections();
    server.close(() => {
      const used = process.cpuUsage();
      send({ type: 'closed', cpuSeconds: (used.user + used.system) / 1e6 });
      process.disconnect();
    });
  });
  // The parent died without closing: end rather than hold the port.
  process.on('disconnect', () => process.exit(0));
}

function byFileNameThenFolder(a: string, b: string): number {
  const nameOrder = path.posix.basename(a).localeCompare(path.posix.basename(b), 'en');
  return nameOrder !== 0 ? nameOrder : a.localeCompare(b, 'en');
}

/**
 * The pages' links carry the server's address into the indexed text, and so into the hash
 * embedder's vectors: on a random port two ingestions of the same pages embed different text
 * (a third of the PostgreSQL manual's segments) and vector and RRF figures moved by up to
 * 0.012 between them. A fixed port (BENCH_CORPUS_PORT, default 47380) makes ingestions
 * comparable; when it is taken (two benches at once) a random port is used, with a warning.
 */
async function listenOnCorpusPort(server: Server): Promise<void> {
  const port = Number(process.env.BENCH_CORPUS_PORT ?? 47380);
  const listen = (on: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(on, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  try {
    await listen(port);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    console.error(
      `serve-directory: port ${port} is in use, serving on a random port: vector figures are not comparable with other ingestions`,
    );
    await listen(0);
  }
}

const [directory, limit, withhold] = process.argv.slice(2);
await serve(directory as string, limit ? Number(limit) : Number.POSITIVE_INFINITY, withhold || undefined);
