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
import {
  scheduleVectorIndexBuilds,
  type VectorIndexBuilds,
  vectorIndexQuietMs,
} from './vector-index-builds.js';

export type EngineDependencies = Omit<
  OrchestratorDependencies,
  'repository' | 'routes' | 'configs' | 'adapterResources'
> & {
  database: Database;
  /** Defaults to the built-in defaults (no environment read). */
  settings?: Settings;
  /** PGlite: quiet time before a model's HNSW build (vector-index-builds.ts); absent = vectorIndexQuietMs. */
  vectorIndexQuietMs?: number | undefined;
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
  const vectorIndexes = vectorIndexBuilds(dependencies, knowledge);
  dependencies.events.subscribe((event) => {
    if (isExecutionEnd(event.type) && 'status' in event) recordExecutionEnded(event.status, event.outcome);
  });
  const engineOrchestrator: typeof orchestrator = {
    ...orchestrator,
    // Every caller stops the orchestrator before it closes the database: a deferred HNSW build
    // (its quiet-moment timer) must not start on a closed database after that.
    async stop() {
      await orchestrator.stop();
      await vectorIndexes.stop();
    },
  };
  return {
    configs,
    executions,
    routes,
    orchestrator: engineOrchestrator,
    knowledge,
    embedders,
    settings,
    vectorIndexes,
  };
}

/**
 * Processing instances build each model's HNSW index after the first execution that wrote its
 * vectors (vector-index-builds.ts: on PGlite at a quiet moment); `whenIdle` lets shutdown wait
 * for a build in progress. An API-only instance builds none.
 */
function vectorIndexBuilds(dependencies: EngineDependencies, knowledge: KnowledgeIndex): VectorIndexBuilds {
  if (dependencies.processMessages === false) {
    const none = () => Promise.resolve();
    return { whenIdle: none, whenBuilt: none, stop: none };
  }
  return scheduleVectorIndexBuilds({
    build: () => knowledge.buildVectorIndexes(),
    events: dependencies.events,
    db: dependencies.database.db,
    deferred: dependencies.database.kind === 'pglite',
    quietMs: dependencies.vectorIndexQuietMs ?? vectorIndexQuietMs,
    logger: dependencies.logger,
  });
}

function isExecutionEnd(type: string): boolean {
  return type === 'execution.completed' || type === 'execution.failed' || type === 'execution.cancelled';
}
