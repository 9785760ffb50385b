/**
 * Pipelines group (spec 4.6): routes across all active executions, pause/resume for all
 * executions at once (PATCH), stop (DELETE), and metrics from lineage.
 */
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import type { MessageCounts, StageMetrics } from '../db/routes-repository.js';
import type { RouteAction, RouteSummary } from '../engine/orchestrator.js';
import { AppError } from '../errors.js';
import { type ApiContext, requireOrchestrator } from './context.js';
import { errorResponses, pageOf, pageQuery } from './schemas/common.js';
import type { PipelineStateUpdateRequest } from './schemas/pipelines.js';

const RouteParams = Type.Object({ route_id: Type.String({ minLength: 1, maxLength: 64 }) });
const ListQuery = Type.Object({
  status: Type.Optional(Type.Union([Type.Literal('running'), Type.Literal('stopped')])),
  ...pageQuery({ defaultLimit: 1000, maxLimit: 1000 }),
});

const actionMessages: Record<RouteAction, string> = {
  pause: 'route paused for every execution that contains it; its messages wait in their queues',
  resume: 'route resumed for every execution that contains it',
  stop: 'route stopped and removed: its remaining messages are recorded as skipped; a new run of its config brings it back',
};

function sum(rows: readonly MessageCounts[]): MessageCounts {
  const total = { messages_received: 0, messages_completed: 0, messages_failed: 0, messages_in_flight: 0 };
  for (const row of rows) {
    total.messages_received += row.messages_received;
    total.messages_completed += row.messages_completed;
    total.messages_failed += row.messages_failed;
    total.messages_in_flight += row.messages_in_flight;
  }
  return total;
}

export async function pipelineRoutes(app: FastifyInstance, context: ApiContext): Promise<void> {
  const findRoute = (routeId: string) => findActiveRoute(context, routeId);
  const routesRepository = () => requireRoutes(context);

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/pipelines',
    {
      schema: {
        tags: ['pipelines'],
        summary: 'Routes across all active executions',
        querystring: ListQuery,
        response: { 200: Type.Ref('PipelineListResponse'), ...errorResponses(422, 503) },
      },
    },
    async (request) => {
      // A stopped route is removed (DELETE, spec 3.3), so `status=stopped` finds none; the
      // value stays valid because the spec names it.
      const routes = (await requireOrchestrator(context).routes()).filter(
        (route) => !request.query.status || route.status === request.query.status,
      );
      return {
        pipelines: pageOf(routes, request.query).map((route) => ({
          route_id: route.route_id,
          status: route.status,
          paused: route.paused,
          executions: route.execution_ids.length,
          inbound_queue: route.inbound_queue,
          stages: route.stages.map((stage) => stage.name),
        })),
        total: routes.length,
      };
    },
  );

  app.get(
    '/pipelines/metrics/aggregate',
    {
      schema: {
        tags: ['pipelines'],
        summary: 'Totals across all pipelines and active executions',
        response: { 200: Type.Ref('AggregateMetrics'), ...errorResponses(503) },
      },
    },
    async () => {
      const routes = await requireOrchestrator(context).routes();
      const executions = new Set(routes.flatMap((route) => route.execution_ids));
      return {
        pipelines: routes.length,
        running: routes.filter((route) => route.status === 'running').length,
        stopped: routes.filter((route) => route.status === 'stopped').length,
        active_executions: executions.size,
        ...sum(await routesRepository().stageMetrics(undefined)),
      };
    },
  );

  app.get<{ Params: Static<typeof RouteParams> }>(
    '/pipelines/:route_id',
    {
      schema: {
        tags: ['pipelines'],
        summary: 'One route, searched across all active executions',
        params: RouteParams,
        response: { 200: Type.Ref('PipelineDetail'), ...errorResponses(404, 422, 503) },
      },
    },
    async (request) => {
      const route = await findRoute(request.params.route_id);
      const metrics = await routesRepository().stageMetrics(route.route_id);
      const executions = context.executions;
      const rows = executions
        ? await Promise.all(route.execution_ids.map((id) => executions.findExecution(id)))
        : [];
      return {
        route_id: route.route_id,
        status: route.status,
        paused: route.paused,
        inbound_queue: route.inbound_queue,
        executions: rows.flatMap((row) =>
          row
            ? [
                {
                  execution_id: row.id,
                  config_id: row.config_id,
                  status: row.status,
                  started_at: new Date(row.created_at).toISOString(),
                },
              ]
            : [],
        ),
        stages: route.stages.map((stage) => ({
          ...stage,
          in_flight: metrics.find((row) => row.stage === stage.name)?.messages_in_flight ?? 0,
        })),
      };
    },
  );

  routeControlRoutes(app, context);
  routeMetricsRoute(app, context);
}

async function findActiveRoute(context: ApiContext, routeId: string): Promise<RouteSummary> {
  const route = (await requireOrchestrator(context).routes()).find((entry) => entry.route_id === routeId);
  if (!route)
    throw new AppError('route_not_found', `route ${JSON.stringify(routeId)} is in no active execution`);
  return route;
}

function requireRoutes(context: ApiContext) {
  if (!context.routes) throw new AppError('database_unavailable', 'the route store is not available');
  return context.routes;
}

/** PATCH (pause, resume) and DELETE (stop) of a route across the executions that contain it. */
function routeControlRoutes(app: FastifyInstance, context: ApiContext): void {
  const control = async (routeId: string, action: RouteAction) => {
    const result = await requireOrchestrator(context).controlRoute(routeId, action);
    return { ...result, message: actionMessages[action] };
  };

  app.patch<{ Params: Static<typeof RouteParams>; Body: Static<typeof PipelineStateUpdateRequest> }>(
    '/pipelines/:route_id',
    {
      schema: {
        tags: ['pipelines'],
        summary: 'Pause or resume a route for every execution that contains it',
        params: RouteParams,
        body: Type.Ref('PipelineStateUpdateRequest'),
        response: { 200: Type.Ref('PipelineControlResponse'), ...errorResponses(404, 422, 503) },
      },
    },
    async (request) => control(request.params.route_id, request.body.action),
  );

  app.delete<{ Params: Static<typeof RouteParams> }>(
    '/pipelines/:route_id',
    {
      schema: {
        tags: ['pipelines'],
        summary: 'Stop a route and remove it (404 afterwards, until a new run of its config)',
        params: RouteParams,
        response: { 200: Type.Ref('PipelineControlResponse'), ...errorResponses(404, 422, 503) },
      },
    },
    async (request) => control(request.params.route_id, 'stop'),
  );
}

/** GET /pipelines/{route_id}/metrics: counts, rate and stage durations of one route. */
function routeMetricsRoute(app: FastifyInstance, context: ApiContext): void {
  app.get<{ Params: Static<typeof RouteParams> }>(
    '/pipelines/:route_id/metrics',
    {
      schema: {
        tags: ['pipelines'],
        summary: 'Message counts and stage durations of a route across active executions',
        params: RouteParams,
        response: { 200: Type.Ref('PipelineMetrics'), ...errorResponses(404, 422, 503) },
      },
    },
    async (request) => {
      const route = await findActiveRoute(context, request.params.route_id);
      const stages: StageMetrics[] = await requireRoutes(context).stageMetrics(route.route_id);
      const recent = await requireRoutes(context).recentlyFinished(route.route_id, 60, context.now());
      const counts = sum(stages);
      // The two reads are separate statements: messages finishing between them must not give
      // a rate that the counts shown do not account for (zero counts, zero rate).
      const finished = counts.messages_completed + counts.messages_failed;
      return {
        route_id: route.route_id,
        ...counts,
        messages_per_second: Math.min(recent, finished) / 60,
        stages: stages.map((row) => ({
          stage: row.stage,
          messages_received: row.messages_received,
          messages_completed: row.messages_completed,
          messages_failed: row.messages_failed,
          messages_in_flight: row.messages_in_flight,
          duration_ms_p50: row.duration_ms_p50 === null ? null : Number(row.duration_ms_p50),
          duration_ms_p95: row.duration_ms_p95 === null ? null : Number(row.duration_ms_p95),
        })),
      };
    },
  );
}
