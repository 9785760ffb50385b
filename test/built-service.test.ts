/**
 * The service as `npm start` runs it: the bundled dist/ (scripts/bundle-dist.mjs), where every
 * other process test starts src/main.ts through tsx. Bundling moves modules, so what a module
 * finds beside itself (package files, the console, worker modules) is only proven here: the
 * build runs when stale (as `npm start` does), then `node dist/main.js serve` starts in a fresh
 * data dir and answers health, the console, a run of an example through the built `weir run`,
 * and a search (language detection runs on a worker module of its own).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startWeirProcess } from './helpers/weir-process.js';

const run = promisify(execFile);
const built = [path.resolve('dist/main.js')];

describe('the built service (npm start)', () => {
  it('starts from the bundled dist/ and serves health, the console, a run and a search', async () => {
    await run(process.execPath, ['scripts/build-if-stale.mjs'], { maxBuffer: 16 * 1024 * 1024 });
    const weir = await startWeirProcess({}, { command: built });
    try {
      const health = await (await fetch(`${weir.base}/api/v1/system/health`)).json();
      expect(health.status).toBe('healthy');
      const console = await fetch(`${weir.base}/`);
      expect(console.status).toBe(200);
      expect(await console.text()).toContain('Weir console');

      const { stdout } = await run(process.execPath, [
        ...built,
        'run',
        'examples/synthetic-load.yaml',
        '--url',
        weir.base,
      ]);
      expect(stdout).toMatch(/succeeded: execution completed .* 0 failed/);

      const search = await fetch(`${weir.base}/api/v1/chat/search/keyword`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'Hvordan kjører jeg tjenesten?' }),
      });
      expect(search.status).toBe(200);
      expect(Array.isArray((await search.json()).results)).toBe(true);
    } finally {
      await weir.stop();
    }
  }, 400_000);
});
