/**
 * buildApp: the whole HTTP API as a Fastify instance that does not listen, so tests drive it
 * with `inject()` and main.ts decides where it listens. Dependencies come in; nothing here
 * opens a connection or reads the environment.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import type { AdapterRegistry } from './adapters/registry.js';
import { adapterRoutes } from './api/adapters.js';
import { installApiKeyCheck } from './api/auth.js';
import { installBrowserGuards } from './api/browser-guards.js';
import { chatRoutes } from './api/chat.js';
import { configRoutes } from './api/configs.js';
import { installConsole } from './api/console.js';
import type { ApiContext } from './api/context.js';
import { documentRoutes } from './api/documents.js';
import { answerClientError, answerFrameworkError, installErrorHandling } from './api/error-handler.js';
import { executionEventRoutes } from './api/execution-events.js';
import { executionRoutes } from './api/executions.js';
import { installJsonBodyParser } from './api/json-body.js';
import { buildLazySerializer } from './api/lazy-serializers.js';
import { installMetrics } from './api/metrics.js';
import { installOpenApi } from './api/openapi.js';
import { pipelineRoutes } from './api/pipelines.js';
import { replayRoutes } from './api/replay.js';
import { installRequestValidation } from './api/request-validation.js';
import { adapterSchemas } from './api/schemas/adapters.js';
import { chatSchemas } from './api/schemas/chat.js';
import { commonSchemas } from './api/schemas/common.js';
import { configSchemas } from './api/schemas/configs.js';
import { evaluationSchemas } from './api/schemas/evaluation.js';
import { executionSchemas } from './api/schemas/executions.js';
import { pipelineSchemas } from './api/schemas/pipelines.js';
import { storageSchemas } from './api/schemas/storage.js';
import { systemSchemas } from './api/schemas/system.js';
import { webhookSchemas } from './api/schemas/webhooks.js';
import { installStartupGate, type StartupWork } from './api/startup-work.js';
import { storageRoutes } from './api/storage.js';
import { storageEventRoutes } from './api/storage-events.js';
import { systemRoutes } from './api/system.js';
import { templateRoutes } from './api/templates.js';
import { webhookRoutes } from './api/webhooks.js';
import type { Broker } from './broker/broker.js';
import { createConfigsRepository } from './db/configs-repository.js';
import type { Database } from './db/database.js';
import { createExecutionsRepository } from './db/executions-repository.js';
import { createRoutesRepository } from './db/routes-repository.js';
import { createStorageCatalogueRepository } from './db/storage-catalogue-repository.js';
import { createConfigStore } from './engine/config/config-store.js';
import type { Orchestrator } from './engine/orchestrator.js';
import { createEventBus, type EventBus } from './events/event-bus.js';
import type { Resolver } from './http/guarded-lookup.js';
import { newTimeOrderedId } from './runtime/time-ordered-ids.js';
import type { LsaIndexOptions } from './search/lsa-index.js';
import type { Settings } from './settings.js';
import type { ObjectStore } from './storage/object-store.js';
import { createWebhooks } from './webhooks/webhooks.js';

export interface AppDependencies {
  settings: Settings;
  /** Absent: endpoints that need it answer 503. */
  database?: Database | undefined;
  storage?: ObjectStore | undefined;
  registry?: AdapterRegistry | undefined;
  broker?: Broker | undefined;
  /** Absent or stopped: run, cancel and the engine endpoints answer 503. */
  orchestrator?: Orchestrator | undefined;
  events?: EventBus | undefined;
  now?: () => Date;
  newId?: () => string;
  /** Fastify logger option; false in tests. */
  logger?: boolean | Record<string, unknown>;
  /**
   * Resolves webhook target names, on registration and when delivering (default: the system
   * resolver). Tests pass one so that no name lookup leaves the machine.
   */
  resolveHost?: Resolver | undefined;
  /** Embedded ranking, `memory` (default), `sql` or `sql-exact` (ApiContext.keywordIndex). */
  keywordIndex?: 'memory' | 'sql' | 'sql-exact' | undefined;
  /** The corpus LSA's rank and build delays when WEIR_SEARCH_LSA=on (ApiContext.lsaOptions). */
  lsaOptions?: LsaIndexOptions | undefined;
  /** Work still under way after the server listens (api/startup-work.ts); absent = none. */
  startup?: StartupWork | undefined;
}

export const namedSchemas = [
  ...commonSchemas,
  ...systemSchemas,
  ...adapterSchemas,
  ...configSchemas,
  ...executionSchemas,
  ...chatSchemas,
  ...evaluationSchemas,
  ...pipelineSchemas,
  ...storageSchemas,
  ...webhookSchemas,
];

export async function buildApp(dependencies: AppDependencies): Promise<FastifyInstance> {
  const { settings, database, storage, registry, broker, orchestrator } = dependencies;
  const now = dependencies.now ?? (() => new Date());
  const newId = dependencies.newId ?? newTimeOrderedId;
  const app = Fastify({
    logger: dependencies.logger ?? false,
    bodyLimit: settings.body_limit_bytes,
    // Fastify turns Node's request timeout off (0): a client sending a byte every few seconds
    // would hold its connection for ever. The request (not the answer) must arrive in time;
    // Node checks every `connectionsCheckingInterval` (30 s by default: too coarse).
    requestTimeout: settings.request_timeout_ms,
    http: {
      headersTimeout: Math.min(60_000, settings.request_timeout_ms),
      connectionsCheckingInterval: Math.min(1_000, settings.request_timeout_ms),
    },
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
    // Each route's response serializer is compiled when it first answers, not at start-up.
    schemaController: { compilersFactory: { buildSerializer: buildLazySerializer } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // First: the Host and cross-site checks answer before the key check and every route.
  installBrowserGuards(app, settings);
  installErrorHandling(app);
  installJsonBodyParser(app);
  installRequestValidation(app, namedSchemas);
  installApiKeyCheck(app, settings.api_keys, settings.metrics_tokens);
  installMetrics(app);
  installStartupGate(app, dependencies.startup);
  await installOpenApi(app, namedSchemas);

  const context: ApiContext = {
    settings,
    database,
    storage,
    registry,
    configs:
      database && registry
        ? createConfigStore({
            repository: createConfigsRepository(database.db),
            registry,
            settings,
            now,
            newId,
          })
        : undefined,
    executions: database ? createExecutionsRepository(database.db) : undefined,
    routes: database ? createRoutesRepository(database.db) : undefined,
    catalogue: database ? createStorageCatalogueRepository(database.db) : undefined,
    broker,
    orchestrator,
    events: dependencies.events ?? createEventBus(),
    now,
    newId,
    keywordIndex: dependencies.keywordIndex,
    lsaOptions: dependencies.lsaOptions,
    startup: dependencies.startup,
  };
  // The webhook dispatcher runs on every instance with a database; it stops before the app closes.
  const webhooks = database
    ? createWebhooks({
        database,
        events: context.events,
        allowedCidrs: settings.webhook_allowed_cidrs,
        ...(dependencies.resolveHost ? { lookup: dependencies.resolveHost } : {}),
        now,
        newId,
        onError: (error, message) => app.log.error({ err: error }, message),
      })
    : undefined;
  if (webhooks) {
    webhooks.dispatcher.start();
    app.addHook('onClose', () => webhooks.close());
  }
  await installConsole(app);
  await app.register(
    async (api) => {
      await systemRoutes(api, context);
      await adapterRoutes(api, context);
      await configRoutes(api, context);
      await executionRoutes(api, context);
      await executionEventRoutes(api, context);
      await pipelineRoutes(api, context);
      await storageRoutes(api, context);
      await storageEventRoutes(api, context);
      await replayRoutes(api, context);
      await chatRoutes(api, context);
      await documentRoutes(api, context);
      await templateRoutes(api, context);
      await webhookRoutes(api, context, webhooks);
    },
    { prefix: '/api/v1' },
  );
  return app;
}
