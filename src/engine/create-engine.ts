/** Wires the orchestrator and its stores over one database: the single place that does it. */
import { createConfigsRepository } from '../db/configs-repository.js';
import type { Database } from '../db/database.js';
import { createExecutionsRepository } from '../db/executions-repository.js';
import { createRoutesRepository } from '../db/routes-repository.js';
import { createEmbeddersFromSettings } from '../embedding/embedders.js';
import { createKnowledgeIndex } from '../knowledge/knowledge-index.js';
import { loadSettings, type Settings } from '../settings.js';
import { createConfigStore } from './config/config-store.js';
import { createOrchestrator, type OrchestratorDependencies } from './orchestrator.js';

export type EngineDependencies = Omit<
  OrchestratorDependencies,
  'repository' | 'routes' | 'configs' | 'adapterResources'
> & {
  database: Database;
  /** Defaults to the built-in defaults (no environment read). */
  settings?: Settings;
};

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
  const settings = dependencies.settings ?? loadSettings({});
  const knowledge = createKnowledgeIndex(database.db, now);
  const embedders = createEmbeddersFromSettings(settings.embedding_models);
  const orchestrator = createOrchestrator({
    ...dependencies,
    repository: executions,
    routes,
    configs,
    adapterResources: { storage: dependencies.storage, knowledge, embedders, settings },
  });
  return { configs, executions, routes, orchestrator, knowledge, embedders, settings };
}
