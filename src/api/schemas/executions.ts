/** Executions group schemas (spec 2.6, 3.1, 4.5 run, 4.9 wait; the group itself is Weir's design). */
import { Type } from 'typebox';
import { OUTCOMES } from '../../db/execution-outcome.js';
import { FreeObject } from './common.js';

const nullableTime = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);
export const executionStatuses = ['running', 'completed', 'failed', 'cancelled'] as const;
export const lineageStatuses = ['queued', 'completed', 'failed', 'skipped'] as const;

export const ExecutionResponse = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    config_id: Type.String({ format: 'uuid' }),
    config_version: Type.Integer({ description: 'config version the execution was started from' }),
    config_hash: Type.String(),
    tag: Type.Union([Type.String(), Type.Null()], { description: 'unique across executions when set' }),
    status: Type.Union(executionStatuses.map((status) => Type.Literal(status))),
    skip_init_message: Type.Boolean(),
    init_payload: FreeObject('init message payload: YAML defaults merged with the run request body'),
    pending_messages: Type.Integer({ description: 'messages queued and not yet finished' }),
    error: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    finished_at: nullableTime,
    outcome: Type.Union([...OUTCOMES.map((outcome) => Type.Literal(outcome)), Type.Null()], {
      description:
        "Weir's own verdict once the execution ended (null while running, and for executions that " +
        'ended before Weir 0.17 kept it): succeeded; partial (messages failed or were skipped by the ' +
        'engine, yet some reached the end of the pipeline); failed; empty (nothing failed and nothing ' +
        'reached the end, e.g. the source step found nothing). docs/engine.md, "Outcomes"',
    }),
    first_errors: Type.Array(Type.Ref('OutcomeError'), {
      description:
        'the failed, then skipped, messages that explain the outcome (at most 5); empty when succeeded',
    }),
    config_name: Type.Union([Type.String(), Type.Null()], {
      description: "Weir's own: the config's current name (null when the config row is gone)",
    }),
    message_counts: Type.Object(
      {
        total: Type.Integer({ minimum: 0 }),
        completed: Type.Integer({ minimum: 0 }),
        failed: Type.Integer({ minimum: 0 }),
        skipped: Type.Integer({ minimum: 0 }),
        queued: Type.Integer({ minimum: 0, description: 'queued or in a handler' }),
      },
      { description: "Weir's own: the execution's messages (lineage rows) by status" },
    ),
  },
  { $id: 'ExecutionResponse' },
);

export const OutcomeError = Type.Object(
  {
    message_id: Type.String({ format: 'uuid' }),
    route_id: Type.String(),
    stage: Type.String(),
    status: Type.Union([Type.Literal('failed'), Type.Literal('skipped')]),
    error: Type.Union([Type.String(), Type.Null()], { description: 'the error, or the reason for the skip' }),
  },
  { $id: 'OutcomeError' },
);

export const ExecutionListResponse = Type.Object(
  {
    executions: Type.Array(Type.Ref('ExecutionResponse')),
    total: Type.Integer({ minimum: 0 }),
    limit: Type.Integer(),
    offset: Type.Integer(),
  },
  { $id: 'ExecutionListResponse' },
);

export const ExecutionStatistics = Type.Object(
  {
    execution_id: Type.String({ format: 'uuid' }),
    total_messages: Type.Integer({ minimum: 0, description: 'messages recorded in lineage' }),
    completed_messages: Type.Integer({ minimum: 0 }),
    failed_messages: Type.Integer({ minimum: 0 }),
    skipped_messages: Type.Integer({ minimum: 0, description: 'e.g. a 404 at fetch time (spec 2.3 rule 1)' }),
    processing_messages: Type.Integer({ minimum: 0, description: 'queued or in a handler' }),
    success_rate: Type.Number({ minimum: 0, maximum: 1, description: '(completed + skipped) / finished' }),
    first_errors: Type.Array(
      Type.Object({
        message_id: Type.String({ format: 'uuid' }),
        route_id: Type.String(),
        stage: Type.String(),
        error: Type.Union([Type.String(), Type.Null()]),
      }),
      {
        description: 'the earliest failed messages (at most 5) with their errors; the lineage API lists all',
      },
    ),
  },
  { $id: 'ExecutionStatistics' },
);

export const ExecutionWaitRequest = Type.Object(
  { timeout_seconds: Type.Integer({ minimum: 1, maximum: 3600, description: 'longest wait' }) },
  { $id: 'ExecutionWaitRequest', additionalProperties: false },
);

export const ExecutionWaitResponse = Type.Object(
  {
    completed: Type.Boolean({
      description: 'true when the execution reached a terminal state; false on timeout',
    }),
    execution_id: Type.String({ format: 'uuid' }),
    status: Type.Union(executionStatuses.map((status) => Type.Literal(status))),
    outcome: Type.Union([...OUTCOMES.map((outcome) => Type.Literal(outcome)), Type.Null()], {
      description: "Weir's verdict (ExecutionResponse.outcome); null while running",
    }),
    first_errors: Type.Array(Type.Ref('OutcomeError')),
    waited_ms: Type.Number(),
    statistics: Type.Ref('ExecutionStatistics'),
  },
  { $id: 'ExecutionWaitResponse' },
);

export const LineageEntry = Type.Object(
  {
    message_id: Type.String(),
    correlation_id: Type.Union([Type.String(), Type.Null()], {
      description: 'parent message; null for init',
    }),
    execution_id: Type.String(),
    route_id: Type.String(),
    stage: Type.String({ description: 'stage that processes the message' }),
    emitted_by: Type.String({ description: 'stage that emitted it (envelope stage)' }),
    status: Type.Union(lineageStatuses.map((status) => Type.Literal(status))),
    attempts: Type.Integer(),
    error: Type.Union([Type.String(), Type.Null()]),
    queued_at: Type.String({ format: 'date-time' }),
    started_at: nullableTime,
    finished_at: nullableTime,
    duration_ms: Type.Union([Type.Number(), Type.Null()]),
  },
  { $id: 'LineageEntry' },
);

export const LineageListResponse = Type.Object(
  {
    messages: Type.Array(Type.Ref('LineageEntry')),
    total: Type.Integer({ minimum: 0 }),
    limit: Type.Integer(),
    offset: Type.Integer(),
  },
  { $id: 'LineageListResponse' },
);

export const UpstreamResponse = Type.Object(
  {
    message_id: Type.String(),
    chain: Type.Array(Type.Ref('LineageEntry'), {
      description: 'the message, then its parent, up to the init message',
    }),
  },
  { $id: 'UpstreamResponse' },
);

export const executionSchemas = [
  OutcomeError,
  ExecutionResponse,
  ExecutionListResponse,
  ExecutionStatistics,
  ExecutionWaitRequest,
  ExecutionWaitResponse,
  LineageEntry,
  LineageListResponse,
  UpstreamResponse,
];
