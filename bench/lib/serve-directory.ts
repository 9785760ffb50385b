/**
 * Serves a directory of HTML pages on loopback with a generated /sitemap.xml listing every
 * .html file, in subfolders too, so a real document set can be crawled offline: the PostgreSQL
 * documentation (one folder) or the GIMP manual (one folder per language, `en/`, `nn/`, ...).
 * Only the pages are listed; what else the folders hold (images, CSS) is served when asked for.
 *
 * The server runs in a child process (serve-directory-child.ts). In the bench's own process
 * it shared the main thread with the service it measured: every page served was event-loop
 * time and garbage the service's stages waited behind, a cost no deployment has (its pages
 * come from other machines). The baseline loops read the same files from disk before they
 * start their clocks, so neither side counts serving; the child's CPU is reported apart.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ChildMessage } from './serve-directory-child.js';

export interface ServedDirectory {
  baseUrl: string;
  pages: string[];
  /** Stops the server; resolves with the CPU seconds its process spent. */
  close(): Promise<number>;
}

/**
 * `limit` keeps the first pages in the sitemap, for shorter runs (serve-directory-child.ts says
 * which). `withhold`: a page listed in the sitemap that answers 404 (a bench's deliberate break:
 * a missing page). BENCH_CORPUS_PORT: the port (serve-directory-child.ts).
 */
export async function serveDirectory(
  directory: string,
  limit = Number.POSITIVE_INFINITY,
  withhold?: string,
): Promise<ServedDirectory> {
  const script = fileURLToPath(new URL('./serve-directory-child.ts', import.meta.url));
  // fork passes this process's execArgv on: under tsx, its loader runs the TypeScript child.
  const child = fork(script, [directory, String(limit), withhold ?? ''], { stdio: 'inherit' });
  const next = (type: ChildMessage['type']) =>
    new Promise<ChildMessage>((resolve, reject) => {
      const onMessage = (message: ChildMessage) => {
        if (message.type !== type) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(message);
      };
      const onExit = (code: number | null) => {
        child.off('message', onMessage);
        reject(new Error(`the page server exited (${code}) before '${type}'`));
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const listening = (await next('listening')) as Extract<ChildMessage, { type: 'listening' }>;
  return {
    baseUrl: listening.baseUrl,
    pages: listening.pages,
    async close() {
      const closed = next('closed');
      child.send('close');
      const { cpuSeconds } = (await closed) as Extract<ChildMessage, { type: 'closed' }>;
      return cpuSeconds;
    },
  };
}
