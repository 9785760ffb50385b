import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAdapter } from '../src/adapters/adapter.js';
import { createBuiltinRegistry } from '../src/adapters/builtin.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { engineCombinations } from './helpers/brokers.js';

const captured: Array<{ payload: Record<string, unknown>; metadata: Record<string, unknown> }> = [];
const capture = defineAdapter({
  type: 'capture_step',
  group: 'synthetic',
  summary: 'records what it receives',
  config: Type.Object({}),
  input: Type.Object({}),
  output: Type.Object({}),
  create: () => async (payload, context) => {
    captured.push({ payload, metadata: { ...context.metadata } });
    return [];
  },
});

describe.each(await engineCombinations())('replay API on $name', ({ database, broker }) => {
  let test: TestApp;
  let pipelines: string;
  let sourceExecution: string;
  let targetConfig: string;
  beforeAll(async () => {
    pipelines = await mkdtemp(path.join(tmpdir(), 'weir-replay-'));
    const registry = createBuiltinRegistry();
    registry.register(capture);
    test = await createTestApp(database, {
      registry,
      broker: await broker.open(),
      environment: { WEIR_PIPELINES_DIR: pipelines },
    });
    const create = async (yaml: string) =>
      (
        await test.app.inject({ method: 'POST', url: '/api/v1/configs', payload: { config_yaml: yaml } })
      ).json().id;
    const source = await create('routes:\n  - id: ingest\n    adapters: [{ type: synthetic_sink }]\n');
    sourceExecution = (await test.app.inject({ method: 'POST', url: `/api/v1/configs/${source}/run` })).json()
      .id;
    targetConfig = await create(
      'name: reprocessing\nroutes:\n  - id: reprocess\n    adapters: [{ type: capture_step }]\n',
    );
    for (const name of ['a.md', 'b.md', 'nested/c.md']) {
      await test.storage.put(`${sourceExecution}/html_to_markdown/${name}`, `# ${name}`, {
        metadata: { execution_id: sourceExecution, stage: 'html_to_markdown' },
      });
    }
    await test.storage.put(`${sourceExecution}/web_scraper/page.html`, '<p/>', { metadata: {} });
  });
  afterAll(async () => {
    await test?.close();
    await rm(pipelines, { recursive: true, force: true });
  });

  const replay = (body: object) => test.app.inject({ method: 'POST', url: '/api/v1/replay', payload: body });

  it('replays every object under execution/stage/path into the target route as a new execution', async () => {
    captured.length = 0;
    const response = await replay({
      source_execution_id: sourceExecution,
      source_stage: 'html_to_markdown',
      target_route: 'reprocess',
    });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({
      target_route: 'reprocess',
      source_prefix: `${sourceExecution}/html_to_markdown/`,
      objects_found: 3,
      messages_published: 3,
    });
    expect(body.execution_id).not.toBe(sourceExecution);
    expect(body.execution_id.charAt(14)).toBe('7'); // UUIDv7
    expect(body.replay_batch_id.charAt(14)).toBe('7');
    const waited = await test.app.inject({
      method: 'POST',
      url: `/api/v1/executions/${body.execution_id}/wait`,
      payload: { timeout_seconds: 30 },
    });
    expect(waited.json()).toMatchObject({
      status: 'completed',
      statistics: { completed_messages: 3, total_messages: 3 },
    });
    expect(captured.map((entry) => entry.payload.object_key).sort()).toEqual([
      `${sourceExecution}/html_to_markdown/a.md`,
      `${sourceExecution}/html_to_markdown/b.md`,
      `${sourceExecution}/html_to_markdown/nested/c.md`,
    ]);
    expect(captured[0]?.metadata).toMatchObject({
      execution_id: body.execution_id,
      replay_batch_id: body.replay_batch_id,
    });
    const lineage = (
      await test.app.inject({ url: `/api/v1/executions/${body.execution_id}/lineage` })
    ).json();
    const correlations = lineage.messages.map((row: { correlation_id: string }) => row.correlation_id);
    expect(new Set(correlations).size).toBe(3);
    expect(lineage.messages[0]).toMatchObject({ route_id: 'reprocess', emitted_by: 'replay' });
  });

  it('narrows to a path under the stage', async () => {
    const body = (
      await replay({
        source_execution_id: sourceExecution,
        source_stage: 'html_to_markdown',
        source_path: 'nested/',
        target_route: 'reprocess',
      })
    ).json();
    expect(body).toMatchObject({ objects_found: 1, messages_published: 1 });
  });

  it('answers 404, 400 and 422 for bad sources and targets', async () => {
    const base = {
      source_execution_id: sourceExecution,
      source_stage: 'html_to_markdown',
      target_route: 'reprocess',
    };
    const unknownExecution = await replay({
      ...base,
      source_execution_id: '00000000-0000-7000-8000-000000000000',
    });
    expect(unknownExecution.statusCode).toBe(404);
    expect((await replay({ ...base, target_route: 'nowhere' })).statusCode).toBe(404);
    expect((await replay({ ...base, source_stage: 'no_such_stage' })).statusCode).toBe(404);
    expect((await replay({ ...base, source_path: '../../etc' })).statusCode).toBe(400);
    expect((await replay({ ...base, target_route: undefined })).statusCode).toBe(422);
    // A second config with the same route makes the target ambiguous until config_id names one.
    await test.app.inject({
      method: 'POST',
      url: '/api/v1/configs',
      payload: { config_yaml: 'routes:\n  - id: reprocess\n    adapters: [{ type: synthetic_sink }]\n' },
    });
    const ambiguous = await replay(base);
    expect(ambiguous.statusCode).toBe(400);
    expect(ambiguous.json().detail).toContain('config_id');
    expect((await replay({ ...base, config_id: targetConfig })).statusCode).toBe(200);
  });

  it('lists routes of the configs with their inbound queues, filtered by source, and reloads files', async () => {
    const routes = (await test.app.inject({ url: '/api/v1/replay/routes' })).json();
    expect(routes.routes).toContainEqual(
      expect.objectContaining({
        route_id: 'reprocess',
        config_id: targetConfig,
        config_name: 'reprocessing',
        source: 'api',
        inbound_queue: 'weir.{execution_id}.reprocess.capture_step',
        stages: ['capture_step'],
      }),
    );
    await writeFile(
      path.join(pipelines, 'late.yaml'),
      'routes:\n  - id: late-route\n    adapters: [{ type: synthetic_sink }]\n',
    );
    const reloaded = (await test.app.inject({ method: 'POST', url: '/api/v1/replay/routes/reload' })).json();
    expect(reloaded.routes).toContainEqual(
      expect.objectContaining({ route_id: 'late-route', source: 'file:late.yaml' }),
    );
    const filtered = (await test.app.inject({ url: '/api/v1/replay/routes?source=late.yaml' })).json();
    expect(filtered.routes.map((route: { route_id: string }) => route.route_id)).toEqual(['late-route']);
  });
});
