/**
 * GET /api/v1/system/ready (docs/deploy.md): the readiness probe an orchestrator calls. Unlike
 * health, which answers 200 whatever it finds (spec 4.1), it answers 503 while a component the
 * instance needs is down, and it is open without an API key, as health is.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
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
});
