/** A fully wired app for integration tests: real database, real filesystem store, live registry. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createBuiltinRegistry } from '../../src/adapters/builtin.js';
import type { AdapterRegistry } from '../../src/adapters/registry.js';
import { buildApp } from '../../src/app.js';
import type { Database } from '../../src/db/database.js';
import { loadSettings, type Settings } from '../../src/settings.js';
import { createFilesystemObjectStore } from '../../src/storage/fs.js';
import type { DatabaseTarget } from './databases.js';

export interface TestApp {
  app: FastifyInstance;
  database: Database;
  registry: AdapterRegistry;
  settings: Settings;
  close(): Promise<void>;
}

export async function createTestApp(
  target: DatabaseTarget,
  options: { settings?: Partial<Settings>; environment?: Record<string, string> } = {},
): Promise<TestApp> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'weir-test-'));
  const settings = loadSettings({ WEIR_DATA_DIR: dataDir, ...options.environment }, options.settings);
  const database = await target.open();
  const registry = createBuiltinRegistry();
  const storage = createFilesystemObjectStore(path.join(dataDir, 'objects'));
  const app = await buildApp({ settings, database, storage, registry });
  return {
    app,
    database,
    registry,
    settings,
    async close() {
      await app.close();
      await database.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
