/**
 * GET /executions/events (Weir's own, in its executions group): server-sent events of
 * executions as they change, for live pages (the console) without polling. Each `execution`
 * event carries the execution as GET /executions/{id} answers it, names and message counts
 * included, every time it changes: started, messages finished (at most one event per execution
 * per second), ended. `execution_id` narrows the stream to some executions, and then each named
 * execution's current state comes first, so a client that asks after a run ended (or while its
 * last change was being read) still gets its end rather than waiting for a change that will not
 * come.
 *
 * A slow reader is not buffered without end: while the socket wants draining, only the latest
 * record of each execution is kept and it is written once the socket drains. The stream ends
 * when the client goes away or at `timeout_seconds` (an `end` event); a comment heartbeat
 * keeps proxies from closing a quiet one. Each instance keeps at most WEIR_MAX_EVENT_STREAMS
 * open (503 `event_streams_full` past that). Auth as every endpoint (the key check runs first).
 */
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { AppError } from '../errors.js';
import type { ApiContext } from './context.js';
import { createExecutionFeed, type ExecutionFeed, type PresentedExecution } from './execution-feed.js';
import { presentNamedExecutions } from './present.js';
import { errorResponses } from './schemas/common.js';
import { eventStreamResponse } from './schemas/media.js';
import { openEventStream } from './sse-stream.js';

const EventsQuery = Type.Object({
  execution_id: Type.Optional(
    Type.Array(Type.String({ format: 'uuid' }), {
      minItems: 1,
      maxItems: 100,
      description: 'only these executions; absent: every execution',
    }),
  ),
  timeout_seconds: Type.Integer({ minimum: 1, maximum: 86_400, default: 3600 }),
  heartbeat_seconds: Type.Integer({ minimum: 1, maximum: 300, default: 15 }),
});

export async function executionEventRoutes(
  app: FastifyInstance,
  context: ApiContext,
  options: { pollMs?: number } = {},
): Promise<void> {
  let feed: ExecutionFeed | undefined;
  /** How to end each open stream: a closing server ends them, or it would wait for them. */
  const streams = new Set<(reason: string) => void>();
  app.addHook('preClose', async () => {
    for (const end of [...streams]) end('server_closing');
  });
  app.addHook('onClose', async () => feed?.close());

  app.get<{ Querystring: Static<typeof EventsQuery> }>(
    '/executions/events',
    {
      schema: {
        tags: ['executions'],
        summary:
          "Server-sent events of executions as they change (Weir's own): one `execution` event per change, with names and message counts",
        querystring: EventsQuery,
        response: {
          200: eventStreamResponse(
            '`execution` events (data: an ExecutionResponse), comment heartbeats, and a last `end` event',
          ),
          ...errorResponses(422, 503),
        },
      },
    },
    async (request, reply) => {
      const database = context.database;
      if (!database) throw new AppError('database_unavailable', 'the execution store is not available');
      if (streams.size >= context.settings.max_event_streams)
        throw new AppError(
          'event_streams_full',
          `this instance already keeps ${streams.size} event streams open (WEIR_MAX_EVENT_STREAMS)`,
        );
      feed ??= createExecutionFeed({
        db: database.db,
        events: context.events,
        now: context.now,
        ...(options.pollMs ? { pollMs: options.pollMs } : {}),
        onError: (error) => app.log.warn({ err: error }, 'executions event stream: reading changes failed'),
      });
      const watched = request.query.execution_id ? new Set(request.query.execution_id) : undefined;

      const stream = openEventStream(reply, {
        heartbeatMs: request.query.heartbeat_seconds * 1000,
        onClose: () => {
          streams.delete(endStream);
          unsubscribe();
          clearTimeout(timeout);
        },
      });
      const endStream = (reason: string) => stream.end(reason, { event: 'end', data: { reason } });
      streams.add(endStream);
      void stream.comment('stream open');

      /** Records waiting for the socket to drain: the latest of each execution only. */
      const waiting = new Map<string, PresentedExecution>();
      /** id -> the `updated_at` last sent: the opening snapshot and the feed may overlap. */
      const sentAt = new Map<string, string>();
      const send = (execution: PresentedExecution) => {
        const previous = sentAt.get(execution.id);
        if (previous !== undefined && previous > execution.updated_at) return;
        sentAt.set(execution.id, execution.updated_at);
        if (waiting.size > 0 || stream.congested) {
          waiting.set(execution.id, execution);
          return;
        }
        // Written at once while the socket has room; the promise resolves when it has room again.
        void stream.send({ id: execution.id, event: 'execution', data: execution }).then(flush);
      };
      const flush = () => {
        const records = [...waiting.values()];
        waiting.clear();
        for (const record of records) send(record);
      };

      const unsubscribe = feed.subscribe((executions) => {
        for (const execution of executions) if (!watched || watched.has(execution.id)) send(execution);
      });
      const timeout = setTimeout(() => endStream('timeout'), request.query.timeout_seconds * 1000);
      if (watched) {
        // Subscribed first, then read: a change in between comes from the feed, and `sentAt`
        // keeps whichever of the two is newer last.
        try {
          const rows = await database.db
            .selectFrom('executions')
            .selectAll()
            .where('id', 'in', [...watched])
            .execute();
          for (const execution of await presentNamedExecutions(database.db, rows)) send(execution);
        } catch (error) {
          // The response is already a stream: the feed's changes still come.
          app.log.warn({ err: error }, 'executions event stream: reading the named executions failed');
        }
      }
    },
  );
}
