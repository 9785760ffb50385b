/**
 * The web console at `/` (console/, built into dist/console by `npm run build`) and the
 * project's markdown docs at `/console/docs/` (the console renders them): static files
 * served by @fastify/static, readable without an API key (they hold no data; the console asks
 * for a key and sends it with every API call). Without a build, `/` says how to make one.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { packagePath } from '../runtime/package-root.js';
import { consolePagePolicy } from './browser-headers.js';

/** Where index.html leaves room for the page's style nonce (read by console/src/editor.ts). */
const NONCE_PLACEHOLDER = '<meta name="weir-style-nonce" content="" />';

/** dist/console, from the source (tests, tsx) and from the build alike. */
export function consoleDirectory(): string | undefined {
  const built = packagePath('dist/console');
  return existsSync(path.join(built, 'index.html')) ? built : undefined;
}

/** The project's docs/ (the console shows validation-codes.md and others from it). */
function docsDirectory(): string | undefined {
  const docs = packagePath('docs');
  return existsSync(path.join(docs, 'validation-codes.md')) ? docs : undefined;
}

export async function installConsole(app: FastifyInstance): Promise<void> {
  const root = consoleDirectory();
  if (!root) {
    app.get('/', { schema: { hide: true } }, async (_request, reply) =>
      reply
        .type('text/plain; charset=utf-8')
        .send('The web console is not built: run `npm run build` (npm start does it), then reload.\n'),
    );
    return;
  }
  await app.register(fastifyStatic, {
    root,
    prefix: '/console/',
    index: false,
    // Long-lived only where the name would change with the content; these names do not.
    cacheControl: true,
    maxAge: 0,
  });
  // The page with a fresh style nonce each time, and the policy that names it.
  const page = readFileSync(path.join(root, 'index.html'), 'utf8');
  app.get('/', { schema: { hide: true } }, async (_request, reply) => {
    const nonce = randomBytes(16).toString('base64');
    return reply
      .header('content-security-policy', consolePagePolicy(nonce))
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(page.replace(NONCE_PLACEHOLDER, `<meta name="weir-style-nonce" content="${nonce}" />`));
  });
  const docs = docsDirectory();
  if (docs)
    await app.register(fastifyStatic, {
      root: docs,
      prefix: '/console/docs/',
      index: false,
      decorateReply: false,
      allowedPath: (pathName) => pathName.endsWith('.md'),
    });
}
