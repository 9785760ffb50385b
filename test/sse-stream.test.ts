/**
 * The server-sent-events writer (src/api/sse-stream.ts) over real HTTP on loopback: a client
 * that stops reading makes the producer wait for 'drain' instead of growing the write buffer,
 * and a client that goes away closes the stream, releases a waiting producer and, on
 * GET /executions/events, frees its place under WEIR_MAX_EVENT_STREAMS. Heartbeats come on a
 * fixed period, or (chat) only after quiet time.
 */
import type { ServerResponse } from 'node:http';
import net from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EventStream, openEventStream } from '../src/api/sse-stream.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { type DatabaseTarget, databaseTargets } from './helpers/databases.js';

const EVENT_COUNT = 2000;
/** 16 KiB per event: 2,000 of them (32 MiB) are more than loopback's socket buffers hold. */
const payload = 'x'.repeat(16 * 1024);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once `read()` has kept the same value for `quietMs`. */
async function settled(read: () => number, quietMs = 300, limitMs = 10_000): Promise<number> {
  const deadline = Date.now() + limitMs;
  let last = read();
  while (Date.now() < deadline) {
    await sleep(quietMs);
    const now = read();
    if (now === last) return now;
    last = now;
  }
  throw new Error(`still changing after ${limitMs} ms (at ${last})`);
}

/** A raw HTTP/1.1 GET over loopback whose reader the test pauses and resumes. */
function openRawClient(port: number, path: string): Promise<{ socket: net.Socket; head: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\n\r\n`);
    });
    socket.once('error', reject);
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      resolve({ socket, head: chunk.toString('latin1') });
    });
  });
}

describe('server-sent-events writer over loopback', () => {
  let app: FastifyInstance;
  let port: number;
  const producer = {
    sent: 0,
    finished: false,
    closedWith: undefined as string | undefined,
    stream: undefined as EventStream | undefined,
    raw: undefined as ServerResponse | undefined,
  };

  beforeAll(async () => {
    app = Fastify();
    app.get('/flood', async (_request, reply) => {
      const stream = openEventStream(reply, {
        onClose: (reason) => {
          producer.closedWith = reason;
        },
      });
      producer.stream = stream;
      producer.raw = reply.raw;
      for (let index = 0; index < EVENT_COUNT && stream.open; index += 1) {
        await stream.send({ id: String(index), event: 'item', data: { index, payload } });
        producer.sent += 1;
      }
      producer.finished = true;
      stream.end('done', { event: 'end', data: { reason: 'done' } });
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    await app?.close();
  });

  const reset = () => {
    producer.sent = 0;
    producer.finished = false;
    producer.closedWith = undefined;
    producer.stream = undefined;
    producer.raw = undefined;
  };

  it('makes the producer wait for a paused reader, then delivers every event in order', async () => {
    reset();
    const { socket, head } = await openRawClient(port, '/flood');
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    expect(head).toMatch(/content-type: text\/event-stream/i);

    const stalledAt = await settled(() => producer.sent);
    expect(stalledAt).toBeLessThan(EVENT_COUNT);
    expect(producer.finished).toBe(false);
    expect(producer.stream?.congested).toBe(true);
    // The response's own buffer holds at most about one event past its high-water mark: the
    // rest waits in the producer, not in memory.
    const raw = producer.raw as ServerResponse;
    expect(raw.writableLength).toBeGreaterThan(0);
    expect(raw.writableLength).toBeLessThanOrEqual(raw.writableHighWaterMark + 2 * payload.length);

    // The connection is kept alive after the response: its last event marks the end. The first
    // chunk, read with the head, may already hold events.
    const chunks = [head];
    const ended = new Promise<void>((resolve) => {
      socket.setEncoding('utf8');
      socket.on('data', (text: string) => {
        chunks.push(text);
        if (`${chunks.at(-2)?.slice(-100)}${text}`.includes('event: end\n')) resolve();
      });
    });
    socket.resume();
    await ended;
    socket.destroy();
    const received = chunks.join('');
    expect(producer.finished).toBe(true);
    expect(producer.sent).toBe(EVENT_COUNT);
    const ids = [...received.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
    expect(ids).toEqual(Array.from({ length: EVENT_COUNT }, (_, index) => index));
    expect(received).toMatch(/event: end\ndata: \{"reason":"done"\}\n\n/);
    expect(producer.closedWith).toBe('done');
  });

  it('closes the stream and releases a waiting producer when the client goes away', async () => {
    reset();
    const { socket } = await openRawClient(port, '/flood');
    const stalledAt = await settled(() => producer.sent);
    expect(stalledAt).toBeLessThan(EVENT_COUNT);
    const stream = producer.stream as EventStream;
    expect(stream.open).toBe(true);

    socket.destroy();
    for (let waited = 0; !producer.finished && waited < 5000; waited += 20) await sleep(20);
    expect(producer.finished).toBe(true);
    expect(producer.closedWith).toBe('client_disconnected');
    expect(stream.open).toBe(false);
    expect(stream.signal.aborted).toBe(true);
    // The producer's loop stops on `open`: at most the send it was waiting on completed.
    expect(producer.sent).toBeLessThanOrEqual(stalledAt + 1);
  });
});

describe('heartbeat comments: fixed period or after quiet time', () => {
  let app: FastifyInstance;
  let port: number;
  const TICKS = 15;
  const TICK_MS = 20;
  const HEARTBEAT_MS = 150;

  beforeAll(async () => {
    app = Fastify();
    // Events every TICK_MS for about 300 ms, then 600 ms of silence, then the end.
    app.get<{ Querystring: { mode: string } }>('/ticks', async (request, reply) => {
      const stream = openEventStream(
        reply,
        request.query.mode === 'quiet'
          ? { heartbeatAfterQuietMs: HEARTBEAT_MS }
          : { heartbeatMs: HEARTBEAT_MS },
      );
      for (let index = 0; index < TICKS; index += 1) {
        await stream.send({ event: 'tick', data: { index } });
        await sleep(TICK_MS);
      }
      await sleep(4 * HEARTBEAT_MS);
      stream.end('done', { event: 'end', data: {} });
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    await app?.close();
  });

  /** Heartbeats before the last tick and after it. */
  async function heartbeats(mode: string) {
    const body = await (await fetch(`http://127.0.0.1:${port}/ticks?mode=${mode}`)).text();
    const items = body.split('\n\n').filter((item) => item.length > 0);
    const lastTick = items.findLastIndex((item) => item.startsWith('event: tick'));
    expect(items.filter((item) => item.startsWith('event: tick'))).toHaveLength(TICKS);
    expect(items.at(-1)).toMatch(/^event: end/);
    const isHeartbeat = (item: string) => item === ': heartbeat';
    return {
      whileTicking: items.slice(0, lastTick).filter(isHeartbeat).length,
      afterwards: items.slice(lastTick).filter(isHeartbeat).length,
    };
  }

  it('sends none while events flow and some once quiet, with heartbeatAfterQuietMs (chat)', async () => {
    const counted = await heartbeats('quiet');
    expect(counted.whileTicking).toBe(0);
    expect(counted.afterwards).toBeGreaterThanOrEqual(2);
  });

  it('sends them on its period even while events flow, with heartbeatMs', async () => {
    const counted = await heartbeats('fixed');
    expect(counted.whileTicking).toBeGreaterThanOrEqual(1);
    expect(counted.afterwards).toBeGreaterThanOrEqual(2);
  });
});

describe('GET /executions/events slots and a client that goes away', () => {
  let test: TestApp;
  let port: number;
  beforeAll(async () => {
    test = await createTestApp(databaseTargets()[0] as DatabaseTarget, {
      settings: { max_event_streams: 1 },
    });
    await test.app.listen({ port: 0, host: '127.0.0.1' });
    port = (test.app.server.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    await test?.close();
  });

  it('refuses a second stream while one is open, and frees the place when its client disconnects', async () => {
    const { socket, head } = await openRawClient(port, '/api/v1/executions/events');
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    const refused = await fetch(`http://127.0.0.1:${port}/api/v1/executions/events`);
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ code: 'event_streams_full' });

    socket.destroy();
    let again: Response | undefined;
    for (let attempt = 0; attempt < 100; attempt += 1) {
      again = await fetch(`http://127.0.0.1:${port}/api/v1/executions/events`);
      if (again.status !== 503) break;
      await again.body?.cancel();
      await sleep(20);
    }
    expect(again?.status).toBe(200);
    await again?.body?.cancel();
  });
});
