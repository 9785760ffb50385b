import { setTimeout as sleep } from 'node:timers/promises';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAdapter } from '../src/adapters/adapter.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { engineCombinations } from './helpers/brokers.js';

const yaml = (prefix: string, count: number, workMs: number) => `
routes:
  - id: ${prefix}-generate
    adapters:
      - type: synthetic_fanout
        config: { count: ${count} }
        destination: ${prefix}-sink
  - id: ${prefix}-sink
    adapters:
      - type: synthetic_sink
        config: { work_ms: ${workMs} }
        concurrency: 1
`;

/** Holds each message 5 ms, then fails those with an even `index` and passes the others on. */
const evenFailer = defineAdapter({
  type: 'even_failer',
  group: 'synthetic',
  summary: 'test adapter: fails even indexes',
  config: Type.Object({}),
  input: Type.Object({}),
  output: Type.Object({}),
  create: () => async (payload) => {
    await sleep(5);
    if (Number(payload.index) % 2 === 0) throw new Error(`even index ${payload.index}`);
    return [{ payload }];
  },
});

describe.each(await engineCombinations())('pipelines API on $name', ({ database: target, broker }) => {
  let test: TestApp;
  beforeAll(async () => {
    test = await createTestApp(target, { broker: await broker.open() });
    test.registry.register(evenFailer);
  });
  afterAll(async () => {
    await test?.close();
  });

  async function run(text: string, query = ''): Promise<string> {
    const config = (
      await test.app.inject({ method: 'POST', url: '/api/v1/configs', payload: { config_yaml: text } })
    ).json();
    const execution = await test.app.inject({
      method: 'POST',
      url: `/api/v1/configs/${config.id}/run${query}`,
    });
    return execution.json().id;
  }
  const statistics = async (id: string) =>
    (
      await test.app.inject({
        method: 'POST',
        url: `/api/v1/executions/${id}/wait`,
        payload: { timeout_seconds: 1 },
      })
    ).json().statistics;
  const sinkCompleted = async (id: string, route: string) =>
    (
      await test.app.inject({
        url: `/api/v1/executions/${id}/lineage?route_id=${route}&status=completed&limit=1`,
      })
    ).json().total;

  it('lists routes of active executions, with detail, metrics, aggregate and 404s', async () => {
    const id = await run(yaml('list', 3, 0), '?skip_init_message=true');
    const listed = (await test.app.inject({ url: '/api/v1/pipelines?status=running' })).json();
    const sink = listed.pipelines.find((route: { route_id: string }) => route.route_id === 'list-sink');
    expect(sink).toMatchObject({
      status: 'running',
      paused: false,
      executions: 1,
      stages: ['synthetic_sink'],
    });
    expect(sink.inbound_queue).toBe('weir.{execution_id}.list-sink.synthetic_sink');
    expect(
      (await test.app.inject({ url: '/api/v1/pipelines?status=stopped' })).json().pipelines,
    ).not.toContainEqual(expect.objectContaining({ route_id: 'list-sink' }));
    const badStatus = await test.app.inject({ url: '/api/v1/pipelines?status=paused' });
    expect(badStatus.statusCode).toBe(422);
    expect(badStatus.json().detail[0].msg).toBe("Input should be 'running' or 'stopped'");

    const detail = await test.app.inject({ url: '/api/v1/pipelines/list-sink' });
    expect(detail.statusCode).toBe(200);
    expect(detail.json()).toMatchObject({
      route_id: 'list-sink',
      executions: [{ execution_id: id, status: 'running' }],
      stages: [{ name: 'synthetic_sink', type: 'synthetic_sink', concurrency: 1, in_flight: 0 }],
    });
    const metrics = await test.app.inject({ url: '/api/v1/pipelines/list-sink/metrics' });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.json()).toMatchObject({ route_id: 'list-sink', messages_received: 0 });
    const aggregate = (await test.app.inject({ url: '/api/v1/pipelines/metrics/aggregate' })).json();
    expect(aggregate.pipelines).toBeGreaterThanOrEqual(2);
    expect(aggregate.active_executions).toBeGreaterThanOrEqual(1);

    for (const url of ['/api/v1/pipelines/nope', '/api/v1/pipelines/nope/metrics']) {
      expect((await test.app.inject({ url })).statusCode).toBe(404);
    }
    expect((await test.app.inject({ method: 'DELETE', url: '/api/v1/pipelines/nope' })).statusCode).toBe(404);
    const badBody = await test.app.inject({
      method: 'PATCH',
      url: '/api/v1/pipelines/list-sink',
      payload: { action: 'explode' },
    });
    expect(badBody.statusCode).toBe(422);
    // An enum error names every allowed value, once.
    expect(badBody.json().detail).toEqual([
      expect.objectContaining({
        loc: ['body', 'action'],
        msg: "Input should be 'pause' or 'resume'",
        type: 'literal_error',
        input: 'explode',
      }),
    ]);
    await test.app.inject({ method: 'POST', url: `/api/v1/executions/${id}/cancel` });
  });

  it('pauses a route for every execution, then resumes it to completion', async () => {
    // 30 messages of 50 ms each through one slot (1.5 s unless paused), so that it still runs
    // when the PATCH comes on a loaded machine.
    const id = await run(yaml('pause', 30, 50));
    const paused = await test.app.inject({
      method: 'PATCH',
      url: '/api/v1/pipelines/pause-sink',
      payload: { action: 'pause' },
    });
    expect(paused.statusCode).toBe(200);
    expect(paused.json()).toMatchObject({
      route_id: 'pause-sink',
      action: 'pause',
      status: 'running',
      paused: true,
      affected_executions: 1,
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    const before = await sinkCompleted(id, 'pause-sink');
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await sinkCompleted(id, 'pause-sink')).toBe(before);
    expect(before).toBeLessThan(30);
    const listed = (await test.app.inject({ url: '/api/v1/pipelines' })).json();
    expect(
      listed.pipelines.find((route: { route_id: string }) => route.route_id === 'pause-sink').paused,
    ).toBe(true);

    const resumed = await test.app.inject({
      method: 'PATCH',
      url: '/api/v1/pipelines/pause-sink',
      payload: { action: 'resume' },
    });
    expect(resumed.json()).toMatchObject({ action: 'resume', paused: false });
    const waited = await test.app.inject({
      method: 'POST',
      url: `/api/v1/executions/${id}/wait`,
      payload: { timeout_seconds: 30 },
    });
    expect(waited.json()).toMatchObject({ status: 'completed', statistics: { completed_messages: 31 } });
  });

  it('stops and removes a route: 404 afterwards, its messages skipped, the execution still ends', async () => {
    // 40 messages of 200 ms each through one slot: about 8 s unless stopped. At 20 ms each the
    // execution ended before the DELETE on a loaded CI machine (stop 47), and a route of no
    // running execution is 404. Stopped, the rest is skipped and it ends at once.
    const id = await run(yaml('stop', 40, 200));
    // Another run keeps `stop-generate` listed however soon the first one ends once its sink's
    // messages are skipped (routes are listed while an execution that has them runs).
    const holder = await run(`
routes:
  - id: stop-generate
    adapters:
      - type: synthetic_fanout
        config: { count: 1 }
        destination: stop-hold
  - id: stop-hold
    adapters:
      - type: synthetic_sink
        config: { work_ms: 60000 }
`);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const stopped = await test.app.inject({ method: 'DELETE', url: '/api/v1/pipelines/stop-sink' });
    expect(stopped.statusCode).toBe(200);
    expect(stopped.json()).toMatchObject({
      route_id: 'stop-sink',
      action: 'stop',
      status: 'stopped',
      affected_executions: 1,
    });
    // Removed (spec 3.3): no detail, metrics, control or list entry, while its execution runs on.
    for (const url of ['/api/v1/pipelines/stop-sink', '/api/v1/pipelines/stop-sink/metrics']) {
      expect((await test.app.inject({ url })).statusCode).toBe(404);
    }
    const again = await test.app.inject({ method: 'DELETE', url: '/api/v1/pipelines/stop-sink' });
    expect(again.statusCode).toBe(404);
    const resume = await test.app.inject({
      method: 'PATCH',
      url: '/api/v1/pipelines/stop-sink',
      payload: { action: 'resume' },
    });
    expect(resume.statusCode).toBe(404);
    const routeIds = async (query = '') =>
      (await test.app.inject({ url: `/api/v1/pipelines${query}` }))
        .json()
        .pipelines.map((route: { route_id: string }) => route.route_id);
    expect(await routeIds()).toContain('stop-generate');
    expect(await routeIds()).not.toContain('stop-sink');
    expect(await routeIds('?status=stopped')).not.toContain('stop-sink');

    const waited = await test.app.inject({
      method: 'POST',
      url: `/api/v1/executions/${id}/wait`,
      payload: { timeout_seconds: 30 },
    });
    expect(waited.json().status).toBe('completed');
    const final = await statistics(id);
    expect(final.skipped_messages).toBeGreaterThan(0);
    expect(final.completed_messages + final.skipped_messages).toBe(41);

    // A new run of a config with the route brings it back.
    const rerun = await run(yaml('stop', 1, 0), '?skip_init_message=true');
    expect(await routeIds('?status=running')).toContain('stop-sink');
    expect((await test.app.inject({ url: '/api/v1/pipelines/stop-sink' })).statusCode).toBe(200);
    await test.app.inject({ method: 'POST', url: `/api/v1/executions/${rerun}/cancel` });
    await test.app.inject({ method: 'POST', url: `/api/v1/executions/${holder}/cancel` });
  });

  it('reports the counts, durations and rate of a route with known outcomes, failures included', async () => {
    // 10 messages into `metrics-work`: 5 fail, 5 go on to `metrics-hold`, whose sink holds its
    // one slot for a minute so the execution stays running (metrics cover running executions).
    const id = await run(`
routes:
  - id: metrics-generate
    adapters:
      - type: synthetic_fanout
        config: { count: 10 }
        destination: metrics-work
  - id: metrics-work
    adapters:
      - type: even_failer
        retry: { max_attempts: 1 }
        destination: metrics-hold
  - id: metrics-hold
    adapters:
      - type: synthetic_sink
        config: { work_ms: 60000 }
        concurrency: 1
`);
    const finished = async () =>
      (await test.app.inject({ url: `/api/v1/executions/${id}/lineage?route_id=metrics-work&limit=100` }))
        .json()
        .messages.filter((message: { status: string }) => message.status !== 'queued').length;
    for (let waited = 0; (await finished()) < 10 && waited < 30_000; waited += 100) await sleep(100);
    const metrics = (await test.app.inject({ url: '/api/v1/pipelines/metrics-work/metrics' })).json();
    expect(metrics).toMatchObject({
      route_id: 'metrics-work',
      messages_received: 10,
      messages_completed: 5,
      messages_failed: 5,
      messages_in_flight: 0,
    });
    // All ten finished within the last minute.
    expect(metrics.messages_per_second).toBeCloseTo(10 / 60, 5);
    const [stage] = metrics.stages;
    expect(stage).toMatchObject({ stage: 'even_failer', messages_completed: 5, messages_failed: 5 });
    expect(stage.duration_ms_p50).toBeGreaterThanOrEqual(5);
    expect(stage.duration_ms_p95).toBeGreaterThanOrEqual(stage.duration_ms_p50);
    // The held route: one message in the sink's slot, the other four queued behind it.
    const hold = (await test.app.inject({ url: '/api/v1/pipelines/metrics-hold/metrics' })).json();
    expect(hold).toMatchObject({ messages_received: 5, messages_completed: 0, messages_in_flight: 5 });
    expect(hold.messages_per_second).toBe(0);
    const aggregate = (await test.app.inject({ url: '/api/v1/pipelines/metrics/aggregate' })).json();
    expect(aggregate.messages_failed).toBeGreaterThanOrEqual(5);
    await test.app.inject({ method: 'POST', url: `/api/v1/executions/${id}/cancel` });
  });

  it('shows no rate without counts: an ended execution does not count for the route', async () => {
    const first = await run(yaml('rate', 3, 0));
    const waited = await test.app.inject({
      method: 'POST',
      url: `/api/v1/executions/${first}/wait`,
      payload: { timeout_seconds: 30 },
    });
    expect(waited.json().status).toBe('completed');
    // Its messages finished within the last minute, but it is no longer running: a second
    // execution of the route, with nothing published, must show zero counts and a zero rate.
    const second = await run(yaml('rate', 3, 0), '?skip_init_message=true');
    const metrics = (await test.app.inject({ url: '/api/v1/pipelines/rate-sink/metrics' })).json();
    expect(metrics).toMatchObject({
      route_id: 'rate-sink',
      messages_received: 0,
      messages_completed: 0,
      messages_failed: 0,
      messages_per_second: 0,
    });
    await test.app.inject({ method: 'POST', url: `/api/v1/executions/${second}/cancel` });
  });
});
