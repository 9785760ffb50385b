/**
 * Replay group (spec 4.7): routes of the stored pipeline configs, their reload from the
 * pipeline files, and the detached replay of stored objects into a route: a new execution
 * (UUIDv7) started without its init message, one message per object under
 * `<execution_id>/<stage>/<path>` (sidecars dropped) with `object_key` in the payload and
 * `execution_id` and `replay_batch_id` in the metadata.
 */
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import type { ConfigStore } from '../engine/config/config-store.js';
import { parseConfigYamlOffThread } from '../engine/config/parse-thread.js';
import { syncPipelineFiles } from '../engine/config/sync-pipeline-files.js';
import { buildExecutionPlan, queueName } from '../engine/execution-plan.js';
import { AppError } from '../errors.js';
import { assertValidPrefix, isSidecarKey } from '../storage/keys.js';
import { type ApiContext, requireConfigs, requireExecutions, requireOrchestrator } from './context.js';
import { errorResponses, pageOf, pageQuery } from './schemas/common.js';

const RoutesQuery = Type.Object({
  source: Type.Optional(
    Type.String({ minLength: 1, maxLength: 300, description: 'config origin or pipeline file name' }),
  ),
  ...pageQuery({ defaultLimit: 1000, maxLimit: 1000 }),
});

const ReplayRequest = Type.Object(
  {
    source_execution_id: Type.String({ format: 'uuid' }),
    source_stage: Type.String({ minLength: 1, maxLength: 200 }),
    source_path: Type.String({
      default: '',
      maxLength: 1000,
      description: 'path under the stage; empty for all',
    }),
    target_route: Type.String({ minLength: 1, maxLength: 64 }),
    config_id: Type.Optional(
      Type.String({ format: 'uuid', description: 'needed when several configs have the route' }),
    ),
  },
  { additionalProperties: false },
);

interface RouteEntry {
  route_id: string;
  config_id: string;
  config_name: string;
  source: string;
  inbound_queue: string;
  stages: string[];
}

const PAGE = 1000;

async function routesOfConfigs(configs: ConfigStore): Promise<RouteEntry[]> {
  const entries: RouteEntry[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const page = await configs.listDetails({ limit: PAGE, offset });
    for (const config of page) {
      if (!config.is_runnable) continue;
      const plan = buildExecutionPlan(
        config.config_yaml,
        configs.registry,
        await parseConfigYamlOffThread(config.config_yaml),
      );
      for (const route of plan.routes.values()) {
        entries.push({
          route_id: route.id,
          config_id: config.id,
          config_name: config.name,
          source: config.origin,
          inbound_queue: queueName('{execution_id}', route.id, route.stages[0]?.name ?? ''),
          stages: route.stages.map((stage) => stage.name),
        });
      }
    }
    if (page.length < PAGE) break;
  }
  return entries;
}

export async function replayRoutes(app: FastifyInstance, context: ApiContext): Promise<void> {
  /** The reload lists every route: it is the answer to "what did the files define". */
  const everyRoute = { offset: 0, limit: Number.MAX_SAFE_INTEGER };
  async function listRoutes(source: string | undefined, page: { offset: number; limit: number }) {
    const routes = (await routesOfConfigs(requireConfigs(context))).filter(
      (route) => !source || route.source === source || route.source === `file:${source}`,
    );
    return { routes: pageOf(routes, page), total: routes.length };
  }

  app.get<{ Querystring: Static<typeof RoutesQuery> }>(
    '/replay/routes',
    {
      schema: {
        tags: ['replay'],
        summary: 'Routes of the runnable pipeline configs, each with its inbound queue',
        querystring: RoutesQuery,
        response: { 200: Type.Ref('RoutesListResponse'), ...errorResponses(422, 503) },
      },
    },
    async (request) => listRoutes(request.query.source, request.query),
  );

  app.post(
    '/replay/routes/reload',
    {
      schema: {
        tags: ['replay'],
        summary: 'Reload route definitions from the pipeline files, then list them',
        response: { 200: Type.Ref('RoutesListResponse'), ...errorResponses(503) },
      },
    },
    async () => {
      await syncPipelineFiles(context.settings.pipelines_dir, requireConfigs(context));
      return listRoutes(undefined, everyRoute);
    },
  );

  app.post<{ Body: Static<typeof ReplayRequest> }>(
    '/replay',
    {
      schema: {
        tags: ['replay'],
        summary: 'Replay stored objects of an execution stage into a route, as a new execution',
        body: ReplayRequest,
        response: { 200: Type.Ref('DetachedReplayResponse'), ...errorResponses(400, 404, 422, 503) },
      },
    },
    async (request) => {
      const orchestrator = requireOrchestrator(context);
      const body = request.body;
      if (!(await requireExecutions(context).findExecution(body.source_execution_id))) {
        throw new AppError('execution_not_found', `source execution ${body.source_execution_id} not found`);
      }
      const candidates = (await routesOfConfigs(requireConfigs(context))).filter(
        (route) =>
          route.route_id === body.target_route && (!body.config_id || route.config_id === body.config_id),
      );
      if (candidates.length === 0) {
        throw new AppError(
          'route_not_found',
          `no runnable config has a route ${JSON.stringify(body.target_route)}`,
        );
      }
      if (candidates.length > 1) {
        throw new AppError(
          'bad_request',
          `route ${JSON.stringify(body.target_route)} is in ${candidates.length} configs; name one with config_id`,
        );
      }
      const target = candidates[0] as RouteEntry;
      const path = body.source_path.replace(/^\/+/, '');
      const prefix = `${body.source_execution_id}/${body.source_stage}/${path}`;
      assertValidPrefix(prefix);
      if (!context.catalogue) throw new AppError('storage_unavailable', 'object storage is not available');
      const keys: string[] = [];
      for (let offset = 0; ; offset += PAGE) {
        const page = await context.catalogue.list({ prefix, limit: PAGE, offset });
        for (const row of page.objects) if (!isSidecarKey(row.key)) keys.push(row.key);
        if (page.objects.length < PAGE) break;
      }
      if (keys.length === 0)
        throw new AppError('object_not_found', `no stored objects under ${JSON.stringify(prefix)}`);

      const execution = await orchestrator.run(target.config_id, { skipInitMessage: true });
      const replayBatchId = context.newId();
      const published = await orchestrator.inject(
        execution.id,
        target.route_id,
        keys.map((key) => ({
          payload: { object_key: key },
          metadata: {
            execution_id: execution.id,
            replay_batch_id: replayBatchId,
            source_execution_id: body.source_execution_id,
            source_stage: body.source_stage,
            config_id: target.config_id,
          },
        })),
      );
      return {
        execution_id: execution.id,
        replay_batch_id: replayBatchId,
        target_route: target.route_id,
        source_prefix: prefix,
        objects_found: keys.length,
        messages_published: published,
      };
    },
  );
}
