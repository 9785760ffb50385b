/** Wires the orchestrator and its stores over one database: the single place that does it. */
import type { AdapterRegistry } from '../adapters/registry.js';
import type { Broker } from '../broker/broker.js';
import { createConfigsRepository } from '../db/configs-repository.js';
import type { Database } from '../db/database.js';
import { createExecutionsRepository } from '../db/executions-repository.js';
import { createRoutesRepository } from '../db/routes-repository.js';
import type { EventBus } from '../events/event-bus.js';
import type { ObjectStore } from '../storage/object-store.js';
import { createConfigStore } from './config/config-store.js';
import { createOrchestrator, type OrchestratorLogger } from './orchestrator.js';

export interface EngineDependencies {
  database: Database;
  registry: AdapterRegistry;
  broker: Broker;
  storage: ObjectStore;
  events: EventBus;
  now: () => Date;
  newId: () => string;
  logger: OrchestratorLogger;
  pollIntervalMs?: number;
  maxDeliveries?: number;
}

export function createEngine(dependencies: EngineDependencies) {
  const { database, registry, now, newId } = dependencies;
  const configs = createConfigStore({
    repository: createConfigsRepository(database.db),
    registry,
    now,
    newId,
  });
  const executions = createExecutionsRepository(database.db);
  const routes = createRoutesRepository(database.db);
  const orchestrator = createOrchestrator({ ...dependencies, repository: executions, routes, configs });
  return { configs, executions, routes, orchestrator };
}
