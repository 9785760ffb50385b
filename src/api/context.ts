/** What the route modules get from buildApp: the ports, each possibly unavailable (503). */
import type { AdapterRegistry } from '../adapters/registry.js';
import type { Broker } from '../broker/broker.js';
import type { Database } from '../db/database.js';
import type { ExecutionsRepository } from '../db/executions-repository.js';
import type { RoutesRepository } from '../db/routes-repository.js';
import type { StorageCatalogueRepository } from '../db/storage-catalogue-repository.js';
import type { ConfigStore } from '../engine/config/config-store.js';
import type { Orchestrator } from '../engine/orchestrator.js';
import { AppError } from '../errors.js';
import type { EventBus } from '../events/event-bus.js';
import type { LsaIndexOptions } from '../search/lsa-index.js';
import type { Settings } from '../settings.js';
import type { ObjectStore } from '../storage/object-store.js';
import type { StartupWork } from './startup-work.js';

export interface ApiContext {
  settings: Settings;
  database: Database | undefined;
  storage: ObjectStore | undefined;
  registry: AdapterRegistry | undefined;
  configs: ConfigStore | undefined;
  executions: ExecutionsRepository | undefined;
  routes: RoutesRepository | undefined;
  catalogue: StorageCatalogueRepository | undefined;
  broker: Broker | undefined;
  orchestrator: Orchestrator | undefined;
  events: EventBus;
  now: () => Date;
  newId: () => string;
  /**
   * Embedded ranking: `memory` (the default on PGlite: keywords, vectors and rows from memory,
   * src/search/keyword-memory-index.ts), `sql` (the statement alone, HNSW above 1,000 vectors;
   * benchmarks measure one against the other) or `sql-exact` (the statement alone, every vector
   * scored: the ranking `memory` must equal). PostgreSQL: always SQL.
   */
  keywordIndex?: 'memory' | 'sql' | 'sql-exact' | undefined;
  /** The corpus LSA's rank and build delays (lsa-index.ts) when WEIR_SEARCH_LSA=on; absent = its defaults. Small test corpora need a small rank. */
  lsaOptions?: LsaIndexOptions | undefined;
  /** Work `weir serve` does after it listens (the pipeline files): readiness waits for it. */
  startup?: StartupWork | undefined;
}

export function requireRegistry(context: ApiContext): AdapterRegistry {
  if (!context.registry) throw new AppError('registry_unavailable', 'the adapter registry is not available');
  return context.registry;
}

export function requireConfigs(context: ApiContext): ConfigStore {
  if (!context.configs) throw new AppError('database_unavailable', 'the config store is not available');
  return context.configs;
}

export function requireExecutions(context: ApiContext): ExecutionsRepository {
  if (!context.executions) throw new AppError('database_unavailable', 'the execution store is not available');
  return context.executions;
}

export function requireOrchestrator(context: ApiContext): Orchestrator {
  if (!context.orchestrator?.isRunning()) {
    throw new AppError('orchestrator_unavailable', 'the orchestrator is not running');
  }
  return context.orchestrator;
}
