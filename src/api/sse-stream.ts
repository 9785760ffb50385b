/**
 * One server-sent-events writer for the routes that stream (GET /executions/events,
 * GET /storage/events, POST /chat/stream): it opens the hijacked response, writes events in order, and respects
 * the socket's backpressure. When `write()` returns false (the client reads slower than events
 * come), later events wait in order until the socket emits 'drain', and `send()`'s promise
 * resolves only then, so a producer that awaits it slows down instead of growing Node's write
 * buffer without end. A producer that cannot wait (a broker topic) sees `queued` grow and
 * decides what to drop or when to give up.
 *
 * When the client goes away the stream closes: pending sends resolve without writing, `signal`
 * aborts, and `onClose('client_disconnected')` runs once, so a route frees its place.
 *
 * Two heartbeats: the event routes send one on a fixed period (`heartbeatMs`); chat sends one
 * only after `chat_heartbeat_ms` without a write (`heartbeatAfterQuietMs`), so a model that
 * streams text steadily gets no comments between its events.
 */
import type { FastifyReply } from 'fastify';

export interface ServerSentEvent {
  event: string;
  data: unknown;
  id?: string;
}

export interface EventStream {
  /** Aborted once the stream closes (client gone, or ended by the route). */
  readonly signal: AbortSignal;
  /** True until the client goes away or the route ends the stream. */
  readonly open: boolean;
  /** True while the socket's buffer is full and events wait for it to drain. */
  readonly congested: boolean;
  /** Events accepted but not yet handed to the socket (waiting for a drain). */
  readonly queued: number;
  /**
   * Writes one event after those before it. Resolves once written with room to spare, or once
   * the socket has drained when its buffer was full, or at once when the stream is closed.
   * Never rejects.
   */
  send(event: ServerSentEvent): Promise<void>;
  /** A comment line (`: text`), ignored by clients; same ordering and promise as `send`. */
  comment(text: string): Promise<void>;
  /**
   * Writes what is queued, then `last` when given, and ends the response; `onClose` receives
   * `reason`. Does nothing once closed.
   */
  end(reason: string, last?: ServerSentEvent): void;
}

export interface EventStreamOptions {
  /**
   * A `: heartbeat` comment this often keeps proxies from closing a quiet stream; skipped while
   * the socket is congested (the reader is there, only slow).
   */
  heartbeatMs?: number;
  /**
   * Instead of the fixed period: a `: heartbeat` comment once nothing has been written for this
   * long (checked every half of it, at least every 10 ms); also skipped while congested.
   */
  heartbeatAfterQuietMs?: number;
  /** Runs once when the stream closes: `client_disconnected`, or the reason given to `end`. */
  onClose?: (reason: string) => void;
}

export function formatServerSentEvent(item: ServerSentEvent): string {
  const id = item.id === undefined ? '' : `id: ${item.id}\n`;
  return `${id}event: ${item.event}\ndata: ${JSON.stringify(item.data)}\n\n`;
}

/** Hijacks `reply` and answers 200 text/event-stream; the route writes through the result. */
export function openEventStream(reply: FastifyReply, options: EventStreamOptions = {}): EventStream {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    // nginx buffers responses by default, which would hold events back.
    'x-accel-buffering': 'no',
  });
  const abort = new AbortController();
  /** Texts not yet written, each with the resolver of its `send` promise. */
  const queue: { text: string; written: () => void }[] = [];
  /** Resolvers of sends whose write filled the buffer: they resolve on 'drain'. */
  let waitingForDrain: (() => void)[] = [];
  let congested = false;
  let closed = false;
  let lastWrite = Date.now();

  const writeQueued = () => {
    while (!congested && !closed) {
      const next = queue.shift();
      if (!next) return;
      if (raw.write(next.text)) next.written();
      else {
        congested = true;
        waitingForDrain.push(next.written);
      }
    }
  };
  const releaseWaiters = () => {
    const released = waitingForDrain;
    waitingForDrain = [];
    for (const resolve of released) resolve();
  };
  const onDrain = () => {
    congested = false;
    releaseWaiters();
    writeQueued();
  };
  const close = (reason: string) => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    raw.off('drain', onDrain);
    for (const item of queue.splice(0)) item.written();
    releaseWaiters();
    abort.abort(new Error(reason));
    options.onClose?.(reason);
  };
  const write = (text: string): Promise<void> => {
    if (closed) return Promise.resolve();
    lastWrite = Date.now();
    return new Promise<void>((written) => {
      queue.push({ text, written });
      writeQueued();
    });
  };

  raw.on('drain', onDrain);
  raw.on('close', () => close('client_disconnected'));
  const idle = () => !congested && queue.length === 0;
  const quietMs = options.heartbeatAfterQuietMs;
  const heartbeat = options.heartbeatMs
    ? setInterval(() => {
        if (idle()) void write(': heartbeat\n\n');
      }, options.heartbeatMs)
    : quietMs
      ? setInterval(
          () => {
            if (idle() && Date.now() - lastWrite >= quietMs) void write(': heartbeat\n\n');
          },
          Math.max(10, Math.floor(quietMs / 2)),
        )
      : undefined;

  return {
    signal: abort.signal,
    get open() {
      return !closed;
    },
    get congested() {
      return congested;
    },
    get queued() {
      return queue.length;
    },
    send: (item) => write(formatServerSentEvent(item)),
    comment: (text) => write(`: ${text}\n\n`),
    end: (reason, last) => {
      if (closed) return;
      // What is queued goes out before the last event: the socket buffers it, and the
      // response's end lets the client read it at its own pace.
      const rest = queue.splice(0);
      for (const item of rest) raw.write(item.text);
      if (last && !raw.destroyed) raw.write(formatServerSentEvent(last));
      close(reason);
      for (const item of rest) item.written();
      if (!raw.writableEnded && !raw.destroyed) raw.end();
    },
  };
}
