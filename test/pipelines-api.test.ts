import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

describe.each(await engineCombinations())('pipelines API on $name', ({ database: target, broker }) => {
  let test: TestApp;
  beforeAll(async () => {
    test = await createTestApp(target, { broker: await broker.open() });
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
    expect((await test.app.inject({ url: '/api/v1/pipelines?status=paused' })).statusCode).toBe(422);

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
    await test.app.inject({ method: 'POST', url: `/api/v1/executions/${id}/cancel` });
  });

  it('pauses a route for every execution, then resumes it to completion', async () => {
    const id = await run(yaml('pause', 30, 10));
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

  it('stops a route: its remaining messages are skipped and the execution still ends', async () => {
    const id = await run(yaml('stop', 40, 20));
    await new Promise((resolve) => setTimeout(resolve, 150));
    const stopped = await test.app.inject({ method: 'DELETE', url: '/api/v1/pipelines/stop-sink' });
    expect(stopped.statusCode).toBe(200);
    expect(stopped.json()).toMatchObject({ route_id: 'stop-sink', action: 'stop', status: 'stopped' });
    const waited = await test.app.inject({
      method: 'POST',
      url: `/api/v1/executions/${id}/wait`,
      payload: { timeout_seconds: 30 },
    });
    expect(waited.json().status).toBe('completed');
    const final = await statistics(id);
    expect(final.skipped_messages).toBeGreaterThan(0);
    expect(final.completed_messages + final.skipped_messages).toBe(41);
    const listed = (await test.app.inject({ url: '/api/v1/pipelines?status=stopped' })).json();
    expect(listed.pipelines).toContainEqual(
      expect.objectContaining({ route_id: 'stop-sink', status: 'stopped' }),
    );
  });
});
