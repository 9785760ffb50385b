/** A wired engine for tests: database target, filesystem store, in-process broker, orchestrator. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { uuidv7 } from 'uuidv7';
import { createBuiltinRegistry } from '../../src/adapters/builtin.js';
import type { AdapterRegistry } from '../../src/adapters/registry.js';
import type { Broker } from '../../src/broker/broker.js';
import { createMemoryBroker } from '../../src/broker/memory.js';
import type { Database } from '../../src/db/database.js';
import type { ExecutionsRepository } from '../../src/db/executions-repository.js';
import { createStorageCatalogueRepository } from '../../src/db/storage-catalogue-repository.js';
import type { ConfigStore } from '../../src/engine/config/config-store.js';
import { createEngine } from '../../src/engine/create-engine.js';
import type { Orchestrator } from '../../src/engine/orchestrator.js';
import { createEventBus, type EventBus, type WeirEvent } from '../../src/events/event-bus.js';
import { loadSettings, type Settings } from '../../src/settings.js';
import { createCatalogedObjectStore } from '../../src/storage/cataloged.js';
import { createFilesystemObjectStore } from '../../src/storage/fs.js';
import type { ObjectStore } from '../../src/storage/object-store.js';
import type { DatabaseTarget } from './databases.js';

export interface TestEngine {
  /** Holds objects/; the app's WEIR_DATA_DIR. */
  dataDir: string;
  database: Database;
  registry: AdapterRegistry;
  broker: Broker;
  storage: ObjectStore;
  events: EventBus;
  seen: WeirEvent[];
  configs: ConfigStore;
  repository: ExecutionsRepository;
  orchestrator: Orchestrator;
  close(): Promise<void>;
}

export async function createTestEngine(
  target: DatabaseTarget,
  options: { broker?: Broker; registry?: AdapterRegistry; settings?: Partial<Settings> } = {},
): Promise<TestEngine> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'weir-engine-'));
  const database = await target.open();
  const registry = options.registry ?? createBuiltinRegistry();
  const broker = options.broker ?? createMemoryBroker();
  const storage = createCatalogedObjectStore(
    createFilesystemObjectStore(path.join(dataDir, 'objects')),
    createStorageCatalogueRepository(database.db),
  );
  const events = createEventBus();
  const seen: WeirEvent[] = [];
  events.subscribe((event) => seen.push(event));
  const now = () => new Date();
  const quiet = { info: () => {}, warn: () => {}, error: () => {} };
  const {
    configs,
    executions: repository,
    orchestrator,
  } = createEngine({
    database,
    registry,
    broker,
    storage,
    events,
    now,
    newId: uuidv7,
    logger: quiet,
    pollIntervalMs: 200,
    maxDeliveries: 3,
    // e.g. fetch_allowed_cidrs: tests serving pages on loopback allow it explicitly.
    ...(options.settings ? { settings: loadSettings({}, options.settings) } : {}),
  });
  await orchestrator.start();
  return {
    dataDir,
    database,
    registry,
    broker,
    storage,
    events,
    seen,
    configs,
    repository,
    orchestrator,
    async close() {
      await orchestrator.stop();
      await broker.close();
      await database.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export async function waitForStatus(
  repository: ExecutionsRepository,
  executionId: string,
  status: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await repository.findExecution(executionId);
    if (row?.status === status) return;
    if (Date.now() > deadline) throw new Error(`execution ${executionId} is ${row?.status}, not ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Runs a stored config, waits for `status`, and returns the execution's lineage (up to 1,000 rows). */
export async function runToStatus(engine: TestEngine, configId: string, status: 'completed' | 'failed') {
  const execution = await engine.orchestrator.run(configId);
  await waitForStatus(engine.repository, execution.id, status, 60_000);
  return (await engine.repository.lineage({ execution_id: execution.id, limit: 1000, offset: 0 })).messages;
}
