/**
 * Executions group (Weir's design, spec 4.11 leaves it open): list with filters, one execution,
 * cancel, lineage with filters, the upstream walk of one message, and the legacy blocking wait
 * of spec 4.9 at POST /executions/{execution_id}/wait.
 */
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { OUTCOMES, type Outcome } from '../db/execution-outcome.js';
import type { ExecutionRow } from '../db/execution-types.js';
import { AppError } from '../errors.js';
import { type ApiContext, requireExecutions, requireOrchestrator } from './context.js';
import { presentLineage, presentNamedExecutions } from './present.js';
import { errorResponses, pageQuery } from './schemas/common.js';
import { type ExecutionWaitRequest, executionStatuses, lineageStatuses } from './schemas/executions.js';

const ExecutionParams = Type.Object({ execution_id: Type.String({ format: 'uuid' }) });
const MessageParams = Type.Object({
  execution_id: Type.String({ format: 'uuid' }),
  message_id: Type.String({ format: 'uuid' }),
});
const ListQuery = Type.Object({
  status: Type.Optional(Type.Union(executionStatuses.map((status) => Type.Literal(status)))),
  config_id: Type.Optional(Type.String({ format: 'uuid' })),
  tag: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  outcome: Type.Optional(
    Type.String({
      pattern: `^(${OUTCOMES.join('|')})(,(${OUTCOMES.join('|')}))*$`,
      maxLength: 100,
      description:
        'one outcome or several, comma-separated (`failed,partial,empty`: the runs that need attention)',
    }),
  ),
  ...pageQuery(),
});
const LineageQuery = Type.Object({
  status: Type.Optional(Type.Union(lineageStatuses.map((status) => Type.Literal(status)))),
  route_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  stage: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  ...pageQuery(),
});

const StageCountsResponse = Type.Object({
  execution_id: Type.String({ format: 'uuid' }),
  stages: Type.Array(
    Type.Object({
      route_id: Type.String(),
      stage: Type.String(),
      queued: Type.Integer({ minimum: 0, description: 'waiting or being processed' }),
      completed: Type.Integer({ minimum: 0 }),
      failed: Type.Integer({ minimum: 0 }),
      skipped: Type.Integer({ minimum: 0 }),
    }),
  ),
});

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const WAIT_POLL_MS = 250;

export async function executionRoutes(app: FastifyInstance, context: ApiContext): Promise<void> {
  const presentNamed = async (row: ExecutionRow) =>
    (await presentNamedExecutions(context.database?.db, [row]))[0];

  const findExecution = (id: string) => findExecutionOr404(context, id);

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/executions',
    {
      schema: {
        tags: ['executions'],
        summary: 'List executions, newest first, filtered by status, outcome, config and tag',
        querystring: ListQuery,
        response: { 200: Type.Ref('ExecutionListResponse'), ...errorResponses(422, 503) },
      },
    },
    async (request) => {
      const { limit, offset } = request.query;
      const { outcome, ...filter } = request.query;
      const page = await requireExecutions(context).listExecutions({
        ...filter,
        outcomes: outcome?.split(',') as Outcome[] | undefined,
      });
      const executions = await presentNamedExecutions(context.database?.db, page.executions);
      return { executions, total: page.total, limit, offset };
    },
  );

  app.get<{ Params: Static<typeof ExecutionParams> }>(
    '/executions/:execution_id',
    {
      schema: {
        tags: ['executions'],
        summary: 'One execution',
        params: ExecutionParams,
        response: { 200: Type.Ref('ExecutionResponse'), ...errorResponses(404, 422, 503) },
      },
    },
    async (request) => presentNamed(await findExecution(request.params.execution_id)),
  );

  app.get<{ Params: Static<typeof ExecutionParams> }>(
    '/executions/:execution_id/stages',
    {
      schema: {
        tags: ['executions'],
        summary: "One execution's messages per stage and status (Weir's own: per-stage progress)",
        params: ExecutionParams,
        response: { 200: StageCountsResponse, ...errorResponses(404, 422, 503) },
      },
    },
    async (request) => {
      const execution = await findExecution(request.params.execution_id);
      return {
        execution_id: execution.id,
        stages: await requireExecutions(context).stageCounts(execution.id),
      };
    },
  );

  app.post<{ Params: Static<typeof ExecutionParams> }>(
    '/executions/:execution_id/cancel',
    {
      schema: {
        tags: ['executions'],
        summary: 'Cancel a running execution (a finished one is returned unchanged)',
        params: ExecutionParams,
        response: { 200: Type.Ref('ExecutionResponse'), ...errorResponses(404, 422, 503) },
      },
    },
    async (request) => presentNamed(await requireOrchestrator(context).cancel(request.params.execution_id)),
  );

  lineageRoutes(app, context);
  blockingWaitRoute(app, context);
}

async function findExecutionOr404(context: ApiContext, id: string): Promise<ExecutionRow> {
  const row = await requireExecutions(context).findExecution(id);
  if (!row) throw new AppError('execution_not_found', `execution ${id} not found`);
  return row;
}

/** An execution's lineage rows, and the upstream walk of one message. */
function lineageRoutes(app: FastifyInstance, context: ApiContext): void {
  app.get<{ Params: Static<typeof ExecutionParams>; Querystring: Static<typeof LineageQuery> }>(
    '/executions/:execution_id/lineage',
    {
      schema: {
        tags: ['executions'],
        summary: 'Lineage rows of an execution: one per message',
        params: ExecutionParams,
        querystring: LineageQuery,
        response: { 200: Type.Ref('LineageListResponse'), ...errorResponses(404, 422, 503) },
      },
    },
    async (request) => {
      await findExecutionOr404(context, request.params.execution_id);
      const { limit, offset } = request.query;
      const page = await requireExecutions(context).lineage({
        execution_id: request.params.execution_id,
        ...request.query,
      });
      return { messages: page.messages.map(presentLineage), total: page.total, limit, offset };
    },
  );

  app.get<{ Params: Static<typeof MessageParams> }>(
    '/executions/:execution_id/lineage/:message_id/upstream',
    {
      schema: {
        tags: ['executions'],
        summary: 'A message and its ancestors, walking correlation_id upstream',
        params: MessageParams,
        response: { 200: Type.Ref('UpstreamResponse'), ...errorResponses(404, 422, 503) },
      },
    },
    async (request) => {
      const chain = await requireExecutions(context).upstream(request.params.message_id);
      if (chain.length === 0 || chain[0]?.execution_id !== request.params.execution_id) {
        throw new AppError(
          'execution_not_found',
          `message ${request.params.message_id} not found in this execution`,
        );
      }
      return { message_id: request.params.message_id, chain: chain.map(presentLineage) };
    },
  );
}

/** POST /executions/{execution_id}/wait: spec 4.9's blocking wait, kept for older clients. */
function blockingWaitRoute(app: FastifyInstance, context: ApiContext): void {
  app.post<{ Params: Static<typeof ExecutionParams>; Body: Static<typeof ExecutionWaitRequest> }>(
    '/executions/:execution_id/wait',
    {
      schema: {
        tags: ['executions'],
        summary: 'Block until the execution ends or the timeout passes (legacy; prefer event streams)',
        params: ExecutionParams,
        body: Type.Ref('ExecutionWaitRequest'),
        response: { 200: Type.Ref('ExecutionWaitResponse'), ...errorResponses(404, 422, 503) },
      },
    },
    async (request, reply) => {
      const executions = requireExecutions(context);
      const id = request.params.execution_id;
      const started = performance.now();
      const deadline = started + request.body.timeout_seconds * 1000;
      let row = await findExecutionOr404(context, id);
      let clientGone = false;
      // The response's 'close' fires before we answer only when the client has gone away.
      reply.raw.once('close', () => {
        clientGone = true;
      });
      // Poll the database (the execution may run on another instance) and wake early on a
      // local event for this execution.
      while (!TERMINAL.has(row.status) && performance.now() < deadline && !clientGone) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, Math.min(WAIT_POLL_MS, Math.max(0, deadline - performance.now())));
          const unsubscribe = context.events.subscribe((event) => {
            if (event.execution_id === id && event.type.startsWith('execution.')) done();
          });
          function done() {
            clearTimeout(timer);
            unsubscribe();
            resolve();
          }
        });
        row = (await executions.findExecution(id)) ?? row;
      }
      return {
        completed: TERMINAL.has(row.status),
        execution_id: id,
        status: row.status,
        outcome: row.outcome,
        first_errors: row.first_errors ?? [],
        waited_ms: Math.round(performance.now() - started),
        statistics: await executions.statistics(id),
      };
    },
  );
}
