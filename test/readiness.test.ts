/**
 * GET /api/v1/system/ready (docs/deploy.md): the readiness probe an orchestrator calls. Unlike
 * health, which answers 200 whatever it finds (spec 4.1), it answers 503 while a component the
 * instance needs is down, and it is open without an API key, as health is. While `weir serve`,
 * already listening, still loads the pipeline files, readiness answers 503 naming that work,
 * and the routes whose answer the files change wait for it (src/api/startup-work.ts).
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { createBuiltinRegistry } from '../src/adapters/builtin.js';
import { STARTUP_WAIT_MS, StartupWork } from '../src/api/startup-work.js';
import { buildApp } from '../src/app.js';
import { openDatabase } from '../src/db/database.js';
import { loadSettings } from '../src/settings.js';
import { createFilesystemObjectStore } from '../src/storage/fs.js';

describe('readiness probe', () => {
  it('answers 200 while the database answers and 503 once it does not, without a key', async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'weir-ready-'));
    const database = await openDatabase({});
    const app = await buildApp({
      settings: loadSettings({ WEIR_API_KEYS: 'a-key' }),
      database,
      storage: createFilesystemObjectStore(folder),
    });
    try {
      const ready = await app.inject({ url: '/api/v1/system/ready' });
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toMatchObject({
        status: 'healthy',
        components: { database: { status: 'healthy' } },
      });
      await database.close(); // the database goes away under the running instance
      const down = await app.inject({ url: '/api/v1/system/ready' });
      expect(down.statusCode).toBe(503);
      expect(down.json()).toMatchObject({
        status: 'unhealthy',
        components: { database: { status: 'unhealthy' } },
      });
      // Health still answers 200 (the spec's status codes), with the same verdict.
      const health = await app.inject({ url: '/api/v1/system/health' });
      expect(health.statusCode).toBe(200);
      expect(health.json().status).toBe('unhealthy');
    } finally {
      await app.close();
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('answers 503 naming the start-up work under way, then 200; pipeline routes wait for it, health does not', async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'weir-ready-'));
    const database = await openDatabase({});
    const startup = new StartupWork();
    const app = await buildApp({
      settings: loadSettings({}),
      database,
      storage: createFilesystemObjectStore(folder),
      registry: createBuiltinRegistry(),
      startup,
    });
    try {
      const endPipelineFiles = startup.begin('pipeline files');
      const starting = await app.inject({ url: '/api/v1/system/ready' });
      expect(starting.statusCode).toBe(503);
      expect(starting.json()).toMatchObject({
        starting: ['pipeline files'],
        components: { database: { status: 'healthy' } },
      });
      expect((await app.inject({ url: '/api/v1/system/health' })).statusCode).toBe(200);

      // A config list asked for now is answered only once the files are loaded.
      let listed = false;
      const list = app.inject({ url: '/api/v1/configs' }).then((response) => {
        listed = true;
        return response;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(listed).toBe(false);
      endPipelineFiles();
      expect((await list).statusCode).toBe(200);

      const ready = await app.inject({ url: '/api/v1/system/ready' });
      expect(ready.statusCode).toBe(200);
      expect(ready.json().starting).toBeUndefined();
    } finally {
      await app.close();
      await database.close();
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('answers a pipeline route 503 service_starting when the start-up work outlasts the wait', async () => {
    const startup = new StartupWork();
    startup.begin('pipeline files'); // never ends
    expect(await startup.whenDone(50)).toBe(false);
    const database = await openDatabase({});
    const app = await buildApp({ settings: loadSettings({}), database, startup });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const answer = app.inject({ url: '/api/v1/executions' });
      await vi.advanceTimersByTimeAsync(STARTUP_WAIT_MS + 1);
      const response = await answer;
      expect(response.statusCode).toBe(503);
      expect(response.json()).toMatchObject({ code: 'service_starting' });
      expect(response.json().detail).toContain('pipeline files');
    } finally {
      vi.useRealTimers();
      await app.close();
      await database.close();
    }
  });
});
