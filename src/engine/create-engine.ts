/** Wires the orchestrator and its stores over one database: the single place that does it. */
import { createConfigsRepository } from '../db/configs-repository.js';
import type { Database } from '../db/database.js';
import { createExecutionsRepository } from '../db/executions-repository.js';
import { createExecutionFanIn } from '../db/fan-in-repository.js';
import { createRoutesRepository } from '../db/routes-repository.js';
import { createStorageCatalogueRepository } from '../db/storage-catalogue-repository.js';
import { createExecutionClaims, createSyncStateRepository } from '../db/sync-state-repository.js';
import { createEmbeddersFromSettings } from '../embedding/embedders.js';
import { recordExecutionEnded } from '../metrics/metrics.js';
import { createKnowledgeIndex, type KnowledgeIndex } from '../search-index/knowledge-index.js';
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
  const settings = dependencies.settings ?? loadSettings({});
  const configs = createConfigStore({
    repository: createConfigsRepository(database.db),
    registry,
    settings,
    now,
    newId,
  });
  const executions = createExecutionsRepository(database.db);
  const routes = createRoutesRepository(database.db);
  const knowledge = createKnowledgeIndex(database.db, now);
  const embedders = createEmbeddersFromSettings(settings.embedding_models);
  const syncStates = createSyncStateRepository(database.db);
  const claims = createExecutionClaims(database.db);
  const fanIn = createExecutionFanIn(database.db);
  const orchestrator = createOrchestrator({
    ...dependencies,
    repository: executions,
    routes,
    configs,
    adapterResources: {
      storage: dependencies.storage,
      storageCatalogue: createStorageCatalogueRepository(database.db),
      knowledge,
      embedders,
      settings,
      syncStates: (configId, executionId) => syncStates.forRun(configId, executionId, now),
      executionClaims: (executionId) => claims.forExecution(executionId),
      executionFanIn: (executionId) => fanIn.forExecution(executionId),
    },
  });
  const vectorIndexes = buildVectorIndexesWhenExecutionsEnd(dependencies, knowledge);
  dependencies.events.subscribe((event) => {
    if (isExecutionEnd(event.type) && 'status' in event) recordExecutionEnded(event.status, event.outcome);
  });
  return { configs, executions, routes, orchestrator, knowledge, embedders, settings, vectorIndexes };
}

/**
 * A model's HNSW index is built once the first execution that wrote its vectors has ended
 * (building over loaded rows is far cheaper than growing the graph row by row). Processing
 * instances do it; `whenIdle` lets shutdown wait for a build in progress.
 */
function buildVectorIndexesWhenExecutionsEnd(dependencies: EngineDependencies, knowledge: KnowledgeIndex) {
  let inProgress: Promise<void> = Promise.resolve();
  if (dependencies.processMessages !== false) {
    dependencies.events.subscribe((event) => {
      if (!isExecutionEnd(event.type)) return;
      inProgress = knowledge.buildVectorIndexes().then(
        (models) => {
          if (models.length > 0) dependencies.logger.info({ models }, 'vector indexes built');
        },
        (error: unknown) => dependencies.logger.error({ err: error }, 'building vector indexes failed'),
      );
    });
  }
  return { whenIdle: () => inProgress };
}

function isExecutionEnd(type: string): boolean {
  return type === 'execution.completed' || type === 'execution.failed' || type === 'execution.cancelled';
}
