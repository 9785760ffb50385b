/**
 * A fully wired app for integration tests: real database, real filesystem store, live
 * registry, in-process broker and a started orchestrator, exactly as `weir serve` wires them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { uuidv7 } from 'uuidv7';
import { createBuiltinRegistry } from '../../src/adapters/builtin.js';
import type { AdapterRegistry } from '../../src/adapters/registry.js';
import { buildApp } from '../../src/app.js';
import type { Broker } from '../../src/broker/broker.js';
import { createMemoryBroker } from '../../src/broker/memory.js';
import type { Database } from '../../src/db/database.js';
import { createEngine } from '../../src/engine/create-engine.js';
import type { Orchestrator } from '../../src/engine/orchestrator.js';
import { createEventBus, type EventBus } from '../../src/events/event-bus.js';
import { loadSettings, type Settings } from '../../src/settings.js';
import { createFilesystemObjectStore } from '../../src/storage/fs.js';
import type { DatabaseTarget } from './databases.js';

export interface TestApp {
  app: FastifyInstance;
  database: Database;
  registry: AdapterRegistry;
  settings: Settings;
  orchestrator: Orchestrator;
  events: EventBus;
  close(): Promise<void>;
}

export async function createTestApp(
  target: DatabaseTarget,
  options: {
    settings?: Partial<Settings>;
    environment?: Record<string, string>;
    registry?: AdapterRegistry;
    broker?: Broker;
  } = {},
): Promise<TestApp> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'weir-test-'));
  const settings = loadSettings({ WEIR_DATA_DIR: dataDir, ...options.environment }, options.settings);
  const database = await target.open();
  const registry = options.registry ?? createBuiltinRegistry();
  const storage = createFilesystemObjectStore(path.join(dataDir, 'objects'));
  const broker = options.broker ?? createMemoryBroker();
  const events = createEventBus();
  const now = () => new Date();
  const { orchestrator } = createEngine({
    database,
    registry,
    broker,
    storage,
    events,
    now,
    newId: uuidv7,
    logger: { info: () => {}, error: () => {} },
    pollIntervalMs: 200,
  });
  await orchestrator.start();
  const app = await buildApp({ settings, database, storage, registry, broker, orchestrator, events });
  return {
    app,
    database,
    registry,
    settings,
    orchestrator,
    events,
    async close() {
      await app.close();
      await orchestrator.stop();
      await broker.close();
      await database.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
