/**
 * GET /storage/events (spec 6.4): server-sent events of storage writes for one or more
 * executions, read from the broadcast topic `system.storage.events`. Filters on stage, key
 * prefix (`path`) and extension; `Last-Event-ID` skips events whose UUIDv7 id sorts at or
 * before it (best effort: events published while disconnected are not replayed). A comment
 * heartbeat every `heartbeat_seconds` keeps proxies from closing the stream. The stream ends
 * with an `end` event when every watched execution is terminal, at `timeout_seconds`, or when
 * more than MAX_QUEUED_EVENTS wait for a slow client (`client_too_slow`), or when the client
 * goes away.
 */
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { extensionOf } from '../db/storage-catalogue-repository.js';
import { STORAGE_EVENTS_TOPIC, type StorageObjectCreated } from '../engine/stage-output.js';
import { AppError } from '../errors.js';
import { MAX_KEY_BYTES } from '../storage/keys.js';
import type { ApiContext } from './context.js';
import { errorResponses } from './schemas/common.js';
import { eventStreamResponse } from './schemas/media.js';
import { openEventStream } from './sse-stream.js';

const EventsQuery = Type.Object({
  execution_id: Type.Array(Type.String({ format: 'uuid' }), { minItems: 1, maxItems: 100 }),
  stage: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  path: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_KEY_BYTES, description: 'key prefix' })),
  extension: Type.Optional(Type.String({ maxLength: 200, description: 'comma-separated, e.g. .md,.json' })),
  timeout_seconds: Type.Integer({ minimum: 1, maximum: 86_400, default: 3600 }),
  heartbeat_seconds: Type.Integer({ minimum: 1, maximum: 300, default: 15 }),
});

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const STATUS_POLL_MS = 1000;
/** Events one stream holds for a client that reads slower than they come; past it, the stream ends. */
const MAX_QUEUED_EVENTS = 1000;

function parseStorageEvent(body: Uint8Array): StorageObjectCreated | undefined {
  try {
    return JSON.parse(new TextDecoder().decode(body)) as StorageObjectCreated;
  } catch {
    return undefined;
  }
}

export async function storageEventRoutes(app: FastifyInstance, context: ApiContext): Promise<void> {
  app.get<{ Querystring: Static<typeof EventsQuery> }>(
    '/storage/events',
    {
      schema: {
        tags: ['storage'],
        summary: 'Server-sent storage.object.created events of one or more executions',
        querystring: EventsQuery,
        response: {
          200: eventStreamResponse(
            'storage.object.created events (id: the event UUIDv7), comment heartbeats, and a last `end` event',
          ),
          ...errorResponses(404, 422, 503),
        },
      },
    },
    async (request, reply) => {
      const { broker, executions } = context;
      if (!broker || !executions)
        throw new AppError('storage_unavailable', 'the storage event stream is not available');
      const query = request.query;
      const watched = new Set(query.execution_id);
      for (const id of watched) {
        if (!(await executions.findExecution(id)))
          throw new AppError('execution_not_found', `execution ${id} not found`);
      }
      const extensions = query.extension
        ?.split(',')
        .map((item) => item.trim().toLowerCase())
        .filter(Boolean)
        .map((item) => (item.startsWith('.') ? item : `.${item}`));
      const lastEventId = request.headers['last-event-id'];
      const after = typeof lastEventId === 'string' ? lastEventId : undefined;

      const timers: NodeJS.Timeout[] = [];
      const stream = openEventStream(reply, {
        heartbeatMs: query.heartbeat_seconds * 1000,
        onClose: () => {
          for (const timer of timers) clearTimeout(timer);
          void subscription.then((opened) => opened.unsubscribe()).catch(() => {});
        },
      });
      const end = (reason: string) => stream.end(reason, { event: 'end', data: { reason } });
      void stream.comment('stream open');

      // A broker topic cannot be told to wait: events for a client that reads slower than they
      // come queue in the stream, and past MAX_QUEUED_EVENTS the stream ends (the client may
      // reconnect with Last-Event-ID) rather than holding them in memory without end.
      const subscription = broker.subscribeTopic(STORAGE_EVENTS_TOPIC, (body) => {
        if (!stream.open) return;
        const event = parseStorageEvent(body);
        if (!event || !watched.has(event.execution_id)) return;
        if (query.stage && event.stage !== query.stage) return;
        if (query.path && !event.key.startsWith(query.path)) return;
        if (extensions && !extensions.includes(extensionOf(event.key))) return;
        if (after && event.event_id <= after) return;
        if (stream.queued >= MAX_QUEUED_EVENTS) return end('client_too_slow');
        void stream.send({ id: event.event_id, event: 'storage.object.created', data: event });
      });
      await subscription;
      timers.push(setTimeout(() => end('timeout'), query.timeout_seconds * 1000));
      // The executions may run on other instances: their state is read from the database.
      const checkTerminal = async () => {
        if (!stream.open) return;
        const rows = await Promise.all(
          [...watched].map((id) => executions.findExecution(id).catch(() => undefined)),
        );
        if (rows.every((row) => row && TERMINAL.has(row.status))) return end('executions_finished');
        timers.push(setTimeout(() => void checkTerminal(), STATUS_POLL_MS));
      };
      await checkTerminal();
    },
  );
}
