/** System group (spec 4.1): health, version and the sanitized configuration. */
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { diagnosticTargetPolicy, runStompDiagnostic } from '../broker/stomp/diagnostic.js';
import { syncPipelineFiles } from '../engine/config/sync-pipeline-files.js';
import { outboundBreakers } from '../http/circuit-breakers.js';
import { sanitizeSettings } from '../settings.js';
import { FASTIFY_VERSION, SERVICE_VERSION, TYPEBOX_VERSION } from '../version.js';
import { answerUnauthorized } from './auth.js';
import { type ApiContext, requireConfigs, requireOrchestrator } from './context.js';
import { API_VERSION } from './openapi.js';
import { errorResponses } from './schemas/common.js';

const HealthQuery = Type.Object({
  debug: Type.Boolean({
    default: false,
    description: 'add connection details and last errors (needs an API key when WEIR_API_KEYS is set)',
  }),
});

const CHECK_TIMEOUT_MS = 2000;

interface MQDiagnosticBody {
  host: string;
  port: number;
  username?: string;
  password?: string;
  virtual_host?: string;
  tls: boolean;
  timeout_ms: number;
  queues?: string[];
}
const startedAt = Date.now();

type ComponentStatus = 'healthy' | 'unhealthy' | 'not_configured' | 'not_started';

interface ComponentReport {
  status: ComponentStatus;
  kind?: string;
  latency_ms?: number;
  connection?: string;
  error?: string | null;
}

export async function systemRoutes(app: FastifyInstance, context: ApiContext): Promise<void> {
  app.get<{ Querystring: Static<typeof HealthQuery> }>(
    '/system/health',
    {
      schema: {
        tags: ['system'],
        summary: 'Overall status and the state of database, queue, storage and orchestrator',
        security: [],
        querystring: HealthQuery,
        response: { 200: Type.Ref('SystemHealthResponse'), ...errorResponses(401, 422) },
      },
    },
    async (request, reply) => {
      const debug = request.query.debug;
      // The status stays open to monitors; the details (data dir, database and broker hosts,
      // their errors) are for holders of a key.
      if (debug && !request.hasApiKey) return answerUnauthorized(reply);
      return checkHealth(context, debug);
    },
  );

  // Weir's readiness probe for orchestrators (docs/deploy.md): health always answers 200
  // (spec 4.1); this answers 503 unless every configured component is healthy, so a load
  // balancer or Kubernetes takes an instance out while its database or broker is unreachable,
  // and while `weir serve`, already listening, still loads the pipeline files (`starting`).
  app.get(
    '/system/ready',
    {
      schema: {
        tags: ['system'],
        summary: 'Readiness: 200 when every configured component is healthy, else 503 (Weir addition)',
        security: [],
        response: { 200: Type.Ref('SystemHealthResponse'), 503: Type.Ref('SystemHealthResponse') },
      },
    },
    async (_request, reply) => {
      const health = await checkHealth(context, false);
      const starting = context.startup?.pending() ?? [];
      if (starting.length > 0) return reply.status(503).send({ ...health, starting });
      return reply.status(health.status === 'healthy' ? 200 : 503).send(health);
    },
  );

  app.get(
    '/system/version',
    {
      schema: {
        tags: ['system'],
        summary: 'Version numbers of the service and its main dependencies',
        security: [],
        response: { 200: Type.Ref('VersionInfo') },
      },
    },
    async (request) => {
      // Without a valid key (WEIR_API_KEYS set), only the service's major.minor: monitors can
      // tell releases apart, while exact versions would name the known flaws to try.
      if (!request.hasApiKey) {
        return { service: { name: 'weir', version: majorMinor(SERVICE_VERSION) }, api_version: API_VERSION };
      }
      const service = { service: { name: 'weir', version: SERVICE_VERSION }, api_version: API_VERSION };
      let databaseVersion: string | null = null;
      if (context.database) {
        databaseVersion = await withTimeout(context.database.serverVersion(), CHECK_TIMEOUT_MS).catch(
          () => null,
        );
      }
      return {
        ...service,
        runtime: { name: 'node', version: process.versions.node },
        framework: { name: 'fastify', version: FASTIFY_VERSION },
        validation: { name: 'typebox', version: TYPEBOX_VERSION },
        database: { kind: context.database?.kind ?? 'none', version: databaseVersion },
      };
    },
  );

  app.get(
    '/system/metrics',
    {
      schema: {
        tags: ['system'],
        summary: 'Message counters of this instance, running routes, circuit breakers',
        response: { 200: Type.Ref('SystemMetrics'), ...errorResponses(503) },
      },
    },
    async () => {
      const orchestrator = requireOrchestrator(context);
      const counters = orchestrator.counters();
      const routes = await orchestrator.routes();
      return {
        messages_received: counters.received,
        messages_completed: counters.completed,
        messages_failed: counters.failed,
        messages_in_flight: counters.inFlight,
        running_routes: routes.filter((route) => route.status === 'running' && !route.paused).length,
        circuit_breakers: outboundBreakers.states(),
        uptime_seconds: Math.round((Date.now() - startedAt) / 1000),
      };
    },
  );

  systemOperationRoutes(app, context);
}

/**
 * What an operator does to the running service: reload the pipeline files, test a broker
 * connection, read the configuration with its secrets hidden.
 */
function systemOperationRoutes(app: FastifyInstance, context: ApiContext): void {
  // mq-diagnostic: the configured broker is the endpoint's purpose; any other target, another
  // port of the broker's host included, goes through the address policy
  // (WEIR_MQ_DIAGNOSTIC_ALLOWED_CIDRS), as webhook targets do.
  const diagnosticGuardFor = diagnosticTargetPolicy(
    context.settings.broker_url,
    context.settings.mq_diagnostic_allowed_cidrs,
  );
  app.post(
    '/system/reload',
    {
      schema: {
        tags: ['system'],
        summary: 'Stop all processors, reload the pipeline YAML files, start new processors',
        response: { 200: Type.Ref('ReloadResponse'), ...errorResponses(503) },
      },
    },
    async () => {
      const orchestrator = requireOrchestrator(context);
      const started = performance.now();
      const synced = await syncPipelineFiles(context.settings.pipelines_dir, requireConfigs(context));
      const routes = await orchestrator.restartProcessors();
      const failed = synced.filter((result) => result.outcome === 'failed');
      const changed = synced.filter((result) => result.outcome === 'created' || result.outcome === 'updated');
      return {
        success: failed.length === 0,
        routes_reloaded: routes,
        duration_ms: Math.round(performance.now() - started),
        message:
          `${synced.length} pipeline files read (${changed.length} new or changed` +
          `${failed.length > 0 ? `, ${failed.length} failed: ${failed.map((result) => result.file).join(', ')}` : ''}); ` +
          `processors restarted for ${routes} routes of running executions`,
      };
    },
  );

  app.post<{ Body: MQDiagnosticBody }>(
    '/system/mq-diagnostic',
    {
      schema: {
        tags: ['system'],
        summary: 'One-shot STOMP connection with the given credentials: timed phases and queue round trips',
        body: Type.Ref('MQDiagnosticRequest'),
        response: { 200: Type.Ref('MQDiagnosticResponse'), ...errorResponses(422) },
      },
    },
    async (request) => {
      // Default: a diagnostic queue per configured route (never the routes' own queues, where
      // a synthetic envelope would be processed as real work).
      const routes = context.orchestrator?.isRunning() ? await context.orchestrator.routes() : [];
      const queues =
        request.body.queues ??
        (routes.length > 0
          ? routes.map((route) => `weir.diagnostic.${route.route_id}`)
          : ['weir.diagnostic']);
      return runStompDiagnostic({ ...request.body, queues, guard: diagnosticGuardFor(request.body) });
    },
  );

  app.get(
    '/system/config',
    {
      schema: {
        tags: ['system'],
        summary: 'Service configuration with secrets (passwords, API keys) hidden',
        response: { 200: Type.Ref('SystemConfigResponse'), ...errorResponses(503) },
      },
    },
    async () => ({ settings: sanitizeSettings(context.settings) }),
  );
}

/** `connection` (debug only) is read after the check, so it tells the state the check saw. */
async function probe(
  kind: string,
  connection: string | (() => string) | undefined,
  check: () => Promise<void>,
  debug: boolean,
): Promise<ComponentReport> {
  const started = performance.now();
  let error: string | null = null;
  try {
    await withTimeout(check(), CHECK_TIMEOUT_MS);
  } catch (failure) {
    error = (failure as Error).message;
  }
  const report: ComponentReport = {
    status: error === null ? 'healthy' : 'unhealthy',
    kind,
    latency_ms: elapsed(started),
  };
  if (!debug) return report;
  const described = typeof connection === 'function' ? connection() : connection;
  return { ...report, ...(described ? { connection: described } : {}), error };
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 100) / 100;
}

function withTimeout<T>(promise: Promise<T>, milliseconds: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${milliseconds} ms`)), milliseconds);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** `1.4.2` -> `1.4`; a version that is not dotted numbers is not shown at all. */
export function majorMinor(version: string): string {
  const match = /^(\d+)\.(\d+)(?:\.|$)/.exec(version);
  return match ? `${match[1]}.${match[2]}` : 'unknown';
}

/** The state of each configured component, and the overall status they make. */
async function checkHealth(context: ApiContext, debug: boolean) {
  const { database, storage, broker, orchestrator } = context;
  const [databaseReport, storageReport, queue] = await Promise.all([
    database
      ? probe(database.kind, database.location, () => database.ping(), debug)
      : { status: 'not_configured' as const },
    storage
      ? probe(storage.kind, storage.location, () => storage.check(), debug)
      : { status: 'not_configured' as const },
    broker
      ? probe(
          broker.kind,
          () => broker.describeConnection(),
          () => broker.check(),
          debug,
        )
      : { status: 'not_configured' as const },
  ]);
  const orchestratorReport: ComponentReport = orchestrator
    ? { status: orchestrator.isRunning() ? 'healthy' : 'not_started' }
    : { status: 'not_configured' };
  const reports = [databaseReport, storageReport, queue, orchestratorReport];
  const status = reports.every((report) => report.status === 'healthy' || report.status === 'not_configured')
    ? 'healthy'
    : databaseReport.status === 'unhealthy'
      ? 'unhealthy'
      : 'degraded';
  return {
    status,
    timestamp: context.now().toISOString(),
    components: {
      database: databaseReport,
      queue,
      storage: storageReport,
      orchestrator: orchestratorReport,
    },
  };
}
