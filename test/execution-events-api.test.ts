/**
 * Executions named (issue 31): the execution answer carries its config's name and its message
 * counts; GET /executions/events streams executions as they change, over a real HTTP server,
 * bounded in number, behind the API key, and let go when the client disconnects.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { type DatabaseTarget, databaseTargets } from './helpers/databases.js';

const yaml = (name: string, count: number, workMs = 0) => `
name: ${name}
routes:
  - id: generate
    adapters:
      - type: synthetic_fanout
        config: { count: ${count} }
        destination: sink
  - id: sink
    adapters:
      - type: synthetic_sink
        config: { fail_every: 4, failure: permanent, work_ms: ${workMs} }
`;

interface StreamEvent {
  event: string;
  data: Record<string, unknown>;
}

/** Reads server-sent events from a fetch answer until `until` is satisfied or `ms` pass. */
async function readEvents(
  response: Response,
  until: (events: StreamEvent[]) => boolean,
  ms = 20_000,
): Promise<StreamEvent[]> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const events: StreamEvent[] = [];
  let buffer = '';
  const deadline = Date.now() + ms;
  while (!until(events) && Date.now() < deadline) {
    const next = await Promise.race([
      reader.read(),
      new Promise<undefined>((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now()))),
    ]);
    if (!next || next.done) break;
    buffer += decoder.decode(next.value, { stream: true });
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.+)$/m.exec(block)?.[1];
      const data = /^data: (.+)$/m.exec(block)?.[1];
      if (event && data) events.push({ event, data: JSON.parse(data) });
      end = buffer.indexOf('\n\n');
    }
  }
  await reader.cancel().catch(() => {});
  return events;
}

describe.each(databaseTargets())('named executions and their event stream on $name', (target) => {
  let test: TestApp;
  let base: string;
  beforeAll(async () => {
    test = await createTestApp(target, { settings: { max_event_streams: 2 } });
    base = await test.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await test?.close();
  });

  async function createConfig(name: string, count: number, workMs = 0): Promise<string> {
    const response = await fetch(`${base}/api/v1/configs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ config_yaml: yaml(name, count, workMs) }),
    });
    return ((await response.json()) as { id: string }).id;
  }
  const run = async (configId: string) =>
    (await (await fetch(`${base}/api/v1/configs/${configId}/run`, { method: 'POST' })).json()) as {
      id: string;
      config_name: string;
    };

  it('names an execution by its config and counts its messages, on the run, one and the list', async () => {
    const configId = await createConfig('named-run', 8);
    const started = await run(configId);
    expect(started.config_name).toBe('named-run');
    await fetch(`${base}/api/v1/executions/${started.id}/wait`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ timeout_seconds: 30 }),
    });
    const one = (await (await fetch(`${base}/api/v1/executions/${started.id}`)).json()) as Record<
      string,
      unknown
    >;
    // The init message, 8 fanned out; every fourth sink message fails.
    expect(one).toMatchObject({
      config_name: 'named-run',
      message_counts: { total: 9, completed: 7, failed: 2, skipped: 0, queued: 0 },
      outcome: 'partial',
    });
    const list = (await (await fetch(`${base}/api/v1/executions?config_id=${configId}`)).json()) as {
      executions: Record<string, unknown>[];
    };
    expect(list.executions[0]).toMatchObject({
      id: started.id,
      config_name: 'named-run',
      message_counts: { total: 9, failed: 2 },
    });
  });

  it('streams an execution from its start to its end, named and counted, and only the ones asked for', async () => {
    // 20 messages of 50 ms each: the run lasts about a second, long enough to subscribe to it.
    const configId = await createConfig('streamed-run', 20, 50);
    const everything = await fetch(`${base}/api/v1/executions/events?heartbeat_seconds=1`);
    expect(everything.status).toBe(200);
    expect(everything.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const first = await run(configId);
    const narrowed = await fetch(`${base}/api/v1/executions/events?execution_id=${first.id}`);
    const second = await run(configId);
    const ended = (id: string) => (events: StreamEvent[]) =>
      events.some((item) => item.data.id === id && item.data.status !== 'running');
    const all = await readEvents(everything, (events) => ended(first.id)(events) && ended(second.id)(events));
    const last = all.filter((item) => item.data.id === second.id).at(-1);
    expect(last).toMatchObject({
      event: 'execution',
      data: {
        status: 'completed',
        outcome: 'partial',
        config_name: 'streamed-run',
        message_counts: { total: 21, completed: 16, failed: 5, queued: 0 },
      },
    });
    const only = await readEvents(narrowed, ended(first.id));
    expect(only.length).toBeGreaterThan(0);
    expect(new Set(only.map((item) => item.data.id))).toEqual(new Set([first.id]));
  });

  it('starts a stream narrowed to executions with their current state, so a run that already ended is seen ended', async () => {
    const configId = await createConfig('ended-before-asked', 4);
    const started = await run(configId);
    await fetch(`${base}/api/v1/executions/${started.id}/wait`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ timeout_seconds: 30 }),
    });
    const late = await fetch(`${base}/api/v1/executions/events?execution_id=${started.id}`);
    const events = await readEvents(late, (seen) => seen.length > 0, 10_000);
    expect(events[0]).toMatchObject({
      event: 'execution',
      data: {
        id: started.id,
        status: 'completed',
        config_name: 'ended-before-asked',
        message_counts: { total: 5 },
      },
    });
  });

  it('keeps at most WEIR_MAX_EVENT_STREAMS open and frees a place when a client goes away', async () => {
    /** Opens a stream, waiting for the server to see earlier clients' sockets close. */
    async function openStream(signal?: AbortSignal): Promise<Response> {
      for (let attempt = 0; ; attempt += 1) {
        const response = await fetch(`${base}/api/v1/executions/events`, signal ? { signal } : {});
        if (response.status !== 503 || attempt === 50) return response;
        await response.body?.cancel();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    const controllers = [new AbortController(), new AbortController()];
    const open = [await openStream(controllers[0]?.signal), await openStream(controllers[1]?.signal)];
    expect(open.map((response) => response.status)).toEqual([200, 200]);
    const refused = await fetch(`${base}/api/v1/executions/events`);
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ code: 'event_streams_full' });
    controllers[0]?.abort();
    const again = await openStream();
    expect(again.status).toBe(200);
    await again.body?.cancel();
    controllers[1]?.abort();
  });
});

describe('executions event stream behind API keys', () => {
  let test: TestApp;
  let base: string;
  beforeAll(async () => {
    test = await createTestApp(databaseTargets()[0] as DatabaseTarget, {
      settings: { api_keys: ['stream-key'] },
    });
    base = await test.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await test?.close();
  });

  it('answers 401 without the key and streams with it', async () => {
    const refused = await fetch(`${base}/api/v1/executions/events`);
    expect(refused.status).toBe(401);
    const controller = new AbortController();
    const allowed = await fetch(`${base}/api/v1/executions/events`, {
      headers: { authorization: 'Bearer stream-key' },
      signal: controller.signal,
    });
    expect(allowed.status).toBe(200);
    controller.abort();
  });
});
