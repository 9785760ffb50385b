/**
 * A fully wired app for integration tests: the test engine (real database, filesystem store,
 * live registry, a broker, a started orchestrator) behind buildApp, as `weir serve` wires it.
 */
import type { FastifyInstance } from 'fastify';
import type { AdapterRegistry } from '../../src/adapters/registry.js';
import { buildApp } from '../../src/app.js';
import type { Broker } from '../../src/broker/broker.js';
import type { Database } from '../../src/db/database.js';
import type { Orchestrator } from '../../src/engine/orchestrator.js';
import type { EventBus } from '../../src/events/event-bus.js';
import type { Resolver } from '../../src/http/guarded-lookup.js';
import type { LsaIndexOptions } from '../../src/search/lsa-index.js';
import { loadSettings, type Settings } from '../../src/settings.js';
import type { ObjectStore } from '../../src/storage/object-store.js';
import type { DatabaseTarget } from './databases.js';
import { createTestEngine } from './engine.js';

export interface TestApp {
  app: FastifyInstance;
  database: Database;
  registry: AdapterRegistry;
  settings: Settings;
  orchestrator: Orchestrator;
  events: EventBus;
  storage: ObjectStore;
  broker: Broker;
  close(): Promise<void>;
}

export async function createTestApp(
  target: DatabaseTarget,
  options: {
    settings?: Partial<Settings>;
    environment?: Record<string, string>;
    registry?: AdapterRegistry;
    broker?: Broker;
    /** Webhook target resolution; default: testResolver (no lookup leaves the machine). */
    resolveHost?: Resolver;
    /** Fastify's logger option (a `stream` captures the log); none by default. */
    logger?: Record<string, unknown>;
    /** The corpus LSA's rank and build delays (WEIR_SEARCH_LSA=on). */
    lsaOptions?: LsaIndexOptions;
  } = {},
): Promise<TestApp> {
  // The engine's adapters fetch under the app's egress allowance (WEIR_FETCH_ALLOWED_CIDRS), read
  // the app's share roots (WEIR_FILESHARE_ROOTS, when given) and send the app's named secrets to
  // their origins (the app validates with them, the engine runs
  // with them); its other settings stay the engine defaults.
  const loaded = loadSettings({ ...options.environment }, options.settings);
  const engineSettings: Partial<Settings> = {
    ...(loaded.fetch_allowed_cidrs.length > 0 ? { fetch_allowed_cidrs: loaded.fetch_allowed_cidrs } : {}),
    ...(options.settings?.fileshare_roots || options.environment?.WEIR_FILESHARE_ROOTS
      ? { fileshare_roots: loaded.fileshare_roots }
      : {}),
    ...(Object.keys(loaded.secrets).length > 0
      ? { secrets: loaded.secrets, secret_origins: loaded.secret_origins }
      : {}),
  };
  const engine = await createTestEngine(target, {
    ...(options.broker ? { broker: options.broker } : {}),
    ...(options.registry ? { registry: options.registry } : {}),
    ...(Object.keys(engineSettings).length > 0 ? { settings: engineSettings } : {}),
  });
  const settings = loadSettings({ WEIR_DATA_DIR: engine.dataDir, ...options.environment }, options.settings);
  const app = await buildApp({
    settings,
    database: engine.database,
    storage: engine.storage,
    registry: engine.registry,
    broker: engine.broker,
    orchestrator: engine.orchestrator,
    events: engine.events,
    resolveHost: options.resolveHost ?? testResolver,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.lsaOptions ? { lsaOptions: options.lsaOptions } : {}),
  });
  return {
    app,
    database: engine.database,
    registry: engine.registry,
    settings,
    orchestrator: engine.orchestrator,
    events: engine.events,
    storage: engine.storage,
    broker: engine.broker,
    async close() {
      await app.close();
      await engine.close();
    },
  };
}

/**
 * A name resolver for test apps: `localhost` is loopback, any other name does not exist. Tests
 * never ask the system resolver, whose queries could leave the machine.
 */
export const testResolver: Resolver = async (hostname) => {
  if (hostname === 'localhost')
    return [
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
};
