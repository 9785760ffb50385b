/**
 * Pipelines (routes) and replay records (spec 2.9, 3.3, 4.6, 4.7). Published now so the
 * contract is visible; the endpoints arrive with the engine (docs/spec-coverage.md).
 */
import { Type } from 'typebox';

const RouteStatus = Type.Union([Type.Literal('running'), Type.Literal('stopped')]);

const MessageCounts = {
  messages_received: Type.Integer({ minimum: 0 }),
  messages_completed: Type.Integer({ minimum: 0 }),
  messages_failed: Type.Integer({ minimum: 0 }),
  messages_in_flight: Type.Integer({ minimum: 0 }),
};

export const PipelineSummary = Type.Object(
  {
    route_id: Type.String(),
    status: RouteStatus,
    paused: Type.Boolean({ description: 'paused for every execution that contains it' }),
    executions: Type.Integer({ minimum: 0, description: 'active executions containing this route' }),
    inbound_queue: Type.String(),
    stages: Type.Array(Type.String()),
  },
  { $id: 'PipelineSummary' },
);

export const PipelineListResponse = Type.Object(
  { pipelines: Type.Array(Type.Ref('PipelineSummary')), total: Type.Integer({ minimum: 0 }) },
  { $id: 'PipelineListResponse' },
);

export const PipelineDetail = Type.Object(
  {
    route_id: Type.String(),
    status: RouteStatus,
    paused: Type.Boolean(),
    inbound_queue: Type.String(),
    executions: Type.Array(
      Type.Object({
        execution_id: Type.String({ format: 'uuid' }),
        config_id: Type.String({ format: 'uuid' }),
        status: Type.String(),
        started_at: Type.String({ format: 'date-time' }),
      }),
    ),
    stages: Type.Array(
      Type.Object({
        name: Type.String(),
        type: Type.String(),
        concurrency: Type.Integer({ minimum: 1 }),
        in_flight: Type.Integer({ minimum: 0 }),
      }),
    ),
  },
  { $id: 'PipelineDetail' },
);

export const PipelineMetrics = Type.Object(
  {
    route_id: Type.String(),
    ...MessageCounts,
    messages_per_second: Type.Number({ description: 'completions per second over the last minute' }),
    stages: Type.Array(
      Type.Object({
        stage: Type.String(),
        ...MessageCounts,
        duration_ms_p50: Type.Union([Type.Number(), Type.Null()]),
        duration_ms_p95: Type.Union([Type.Number(), Type.Null()]),
      }),
    ),
  },
  { $id: 'PipelineMetrics' },
);

export const AggregateMetrics = Type.Object(
  {
    pipelines: Type.Integer({ minimum: 0 }),
    running: Type.Integer({ minimum: 0 }),
    stopped: Type.Integer({ minimum: 0 }),
    active_executions: Type.Integer({ minimum: 0 }),
    ...MessageCounts,
  },
  { $id: 'AggregateMetrics' },
);

export const PipelineStateUpdateRequest = Type.Object(
  { action: Type.Union([Type.Literal('pause'), Type.Literal('resume')]) },
  { $id: 'PipelineStateUpdateRequest', additionalProperties: false },
);

export const PipelineControlResponse = Type.Object(
  {
    route_id: Type.String(),
    action: Type.Union([Type.Literal('pause'), Type.Literal('resume'), Type.Literal('stop')]),
    status: RouteStatus,
    paused: Type.Boolean(),
    affected_executions: Type.Integer({ minimum: 0 }),
    message: Type.String(),
  },
  { $id: 'PipelineControlResponse' },
);

export const DetachedReplayResponse = Type.Object(
  {
    execution_id: Type.String({ format: 'uuid', description: 'the new execution (UUIDv7)' }),
    replay_batch_id: Type.String({ format: 'uuid', description: 'groups the replayed messages (UUIDv7)' }),
    target_route: Type.String(),
    source_prefix: Type.String({ description: 'execution_id/stage/path that was listed' }),
    objects_found: Type.Integer({ minimum: 0, description: 'objects under the prefix, sidecars dropped' }),
    messages_published: Type.Integer({ minimum: 0 }),
  },
  { $id: 'DetachedReplayResponse' },
);

export const RoutesListResponse = Type.Object(
  {
    routes: Type.Array(
      Type.Object({
        route_id: Type.String(),
        config_id: Type.String({ format: 'uuid' }),
        config_name: Type.String(),
        source: Type.String({ description: 'config origin, e.g. file:site-ingest.yaml' }),
        inbound_queue: Type.String(),
        stages: Type.Array(Type.String()),
      }),
    ),
    total: Type.Integer({ minimum: 0 }),
  },
  { $id: 'RoutesListResponse' },
);

export const pipelineSchemas = [
  PipelineSummary,
  PipelineListResponse,
  PipelineDetail,
  PipelineMetrics,
  AggregateMetrics,
  PipelineStateUpdateRequest,
  PipelineControlResponse,
  DetachedReplayResponse,
  RoutesListResponse,
];
