import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuiltinRegistry } from '../src/adapters/builtin.js';
import { buildApp } from '../src/app.js';
import { loadSettings } from '../src/settings.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { engineCombinations } from './helpers/brokers.js';

const yaml = (count: number, workMs = 0) => `
name: api-run
init_message:
  payload: { source: yaml, keep: true }
routes:
  - id: generate
    adapters:
      - type: synthetic_fanout
        config: { count: ${count} }
        destination: sink
  - id: sink
    adapters:
      - type: synthetic_sink
        config: { work_ms: ${workMs} }
        concurrency: 4
`;
const unknownId = '00000000-0000-7000-8000-000000000000';

describe.each(await engineCombinations())('run and executions API on $name', ({
  database: target,
  broker,
}) => {
  let test: TestApp;
  beforeAll(async () => {
    test = await createTestApp(target, { broker: await broker.open() });
  });
  afterAll(async () => {
    await test?.close();
  });

  async function createConfig(text: string): Promise<string> {
    const response = await test.app.inject({
      method: 'POST',
      url: '/api/v1/configs',
      payload: { config_yaml: text },
    });
    return response.json().id;
  }
  const wait = (id: string, timeout_seconds = 30) =>
    test.app.inject({ method: 'POST', url: `/api/v1/executions/${id}/wait`, payload: { timeout_seconds } });

  it('runs a config: 201 with the execution, then wait reports completion and statistics', async () => {
    const configId = await createConfig(yaml(20));
    const run = await test.app.inject({
      method: 'POST',
      url: `/api/v1/configs/${configId}/run?tag=first-run`,
      payload: { source: 'request' },
    });
    expect(run.statusCode).toBe(201);
    const execution = run.json();
    expect(execution).toMatchObject({
      config_id: configId,
      config_version: 1,
      // The run answers with the row as read after the init message was published: a run of
      // 20 quick messages may have ended by then (seen once on STOMP with the server).
      status: expect.stringMatching(/^(running|completed)$/),
      tag: 'first-run',
      skip_init_message: false,
      init_payload: { source: 'request', keep: true },
    });
    expect(run.headers.location).toBe(`/api/v1/executions/${execution.id}`);
    const waited = await wait(execution.id);
    expect(waited.statusCode).toBe(200);
    expect(waited.json()).toMatchObject({
      completed: true,
      execution_id: execution.id,
      status: 'completed',
      statistics: {
        execution_id: execution.id,
        total_messages: 21,
        completed_messages: 21,
        failed_messages: 0,
        processing_messages: 0,
        success_rate: 1,
      },
    });
    const detail = await test.app.inject({ url: `/api/v1/executions/${execution.id}` });
    expect(detail.json()).toMatchObject({ status: 'completed', pending_messages: 0 });
    expect(detail.json().finished_at).not.toBeNull();
  });

  it('runs without a body and with a null body', async () => {
    const configId = await createConfig(yaml(1));
    const bare = await test.app.inject({ method: 'POST', url: `/api/v1/configs/${configId}/run` });
    expect(bare.statusCode).toBe(201);
    expect(bare.json().init_payload).toEqual({ source: 'yaml', keep: true });
    const nullBody = await test.app.inject({
      method: 'POST',
      url: `/api/v1/configs/${configId}/run`,
      headers: { 'content-type': 'application/json' },
      payload: 'null',
    });
    expect(nullBody.statusCode).toBe(201);
  });

  it('answers run with 400 and the report for an invalid config, 404 for an unknown one, 400 for a reused tag', async () => {
    const invalid = await createConfig('routes:\n  - id: a\n    adapters: [{ type: nope }]\n');
    const refused = await test.app.inject({ method: 'POST', url: `/api/v1/configs/${invalid}/run` });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ is_valid: false, error_count: 1, findings: [{ code: 'E202' }] });
    expect(
      (await test.app.inject({ method: 'POST', url: `/api/v1/configs/${unknownId}/run` })).statusCode,
    ).toBe(404);
    const configId = await createConfig(yaml(1));
    const first = await test.app.inject({ method: 'POST', url: `/api/v1/configs/${configId}/run?tag=once` });
    expect(first.statusCode).toBe(201);
    const second = await test.app.inject({ method: 'POST', url: `/api/v1/configs/${configId}/run?tag=once` });
    expect(second.statusCode).toBe(400);
    expect(second.json().detail).toContain('already used');
    const badQuery = await test.app.inject({
      method: 'POST',
      url: `/api/v1/configs/${configId}/run?skip_init_message=perhaps`,
    });
    expect(badQuery.statusCode).toBe(422);
  });

  it('times out a wait on an execution that keeps running, then cancels it', async () => {
    const configId = await createConfig(yaml(1));
    const run = await test.app.inject({
      method: 'POST',
      url: `/api/v1/configs/${configId}/run?skip_init_message=true`,
    });
    const id = run.json().id;
    const waited = await wait(id, 1);
    expect(waited.json()).toMatchObject({ completed: false, status: 'running' });
    expect(waited.json().waited_ms).toBeGreaterThanOrEqual(900);
    const cancelled = await test.app.inject({ method: 'POST', url: `/api/v1/executions/${id}/cancel` });
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json().status).toBe('cancelled');
    expect((await wait(id)).json()).toMatchObject({ completed: true, status: 'cancelled' });
  });

  it('settles the queued messages of a cancelled execution: 0 pending, counted as skipped (issue 30)', async () => {
    const configId = await createConfig(yaml(8, 2000));
    const id = (await test.app.inject({ method: 'POST', url: `/api/v1/configs/${configId}/run` })).json().id;
    const execution = async () => (await test.app.inject({ url: `/api/v1/executions/${id}` })).json();
    // Until the fan-out has queued its outputs: they wait behind handlers of 2 s each.
    const until = Date.now() + 20_000;
    while ((await execution()).pending_messages < 8 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await execution()).pending_messages).toBeGreaterThanOrEqual(8);
    const cancelled = await test.app.inject({ method: 'POST', url: `/api/v1/executions/${id}/cancel` });
    expect(cancelled.json()).toMatchObject({ status: 'cancelled', pending_messages: 0 });
    // The handlers that were running finish after the cancel, and change nothing.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const after = await execution();
    expect(after).toMatchObject({ status: 'cancelled', pending_messages: 0 });
    const { statistics } = (await wait(id)).json();
    expect(statistics).toMatchObject({ processing_messages: 0 });
    expect(statistics.skipped_messages).toBeGreaterThanOrEqual(4);
    expect(statistics.completed_messages + statistics.skipped_messages + statistics.failed_messages).toBe(
      statistics.total_messages,
    );
  });

  it('validates the wait body and answers 404 for unknown executions', async () => {
    for (const timeout_seconds of [0, 3601]) {
      const response = await test.app.inject({
        method: 'POST',
        url: `/api/v1/executions/${unknownId}/wait`,
        payload: { timeout_seconds },
      });
      expect(response.statusCode).toBe(422);
    }
    expect((await wait(unknownId, 1)).statusCode).toBe(404);
    expect((await test.app.inject({ url: `/api/v1/executions/${unknownId}` })).statusCode).toBe(404);
    expect(
      (await test.app.inject({ method: 'POST', url: `/api/v1/executions/${unknownId}/cancel` })).statusCode,
    ).toBe(404);
    expect((await test.app.inject({ url: '/api/v1/executions/not-a-uuid' })).statusCode).toBe(422);
  });

  it('lists executions with filters, and lineage with filters and an upstream walk', async () => {
    const configId = await createConfig(yaml(3));
    const run = (
      await test.app.inject({ method: 'POST', url: `/api/v1/configs/${configId}/run?tag=lineage` })
    ).json();
    await wait(run.id);
    const listed = (
      await test.app.inject({ url: `/api/v1/executions?config_id=${configId}&status=completed` })
    ).json();
    expect(listed).toMatchObject({ total: 1, limit: 100, offset: 0 });
    expect(listed.executions[0].id).toBe(run.id);
    expect((await test.app.inject({ url: '/api/v1/executions?tag=lineage' })).json().total).toBe(1);
    expect((await test.app.inject({ url: '/api/v1/executions?status=exploded' })).statusCode).toBe(422);

    const lineage = (
      await test.app.inject({ url: `/api/v1/executions/${run.id}/lineage?route_id=sink` })
    ).json();
    expect(lineage.total).toBe(3);
    const leaf = lineage.messages[0];
    expect(leaf).toMatchObject({
      route_id: 'sink',
      stage: 'synthetic_sink',
      emitted_by: 'synthetic_fanout',
      status: 'completed',
    });
    const upstream = await test.app.inject({
      url: `/api/v1/executions/${run.id}/lineage/${leaf.message_id}/upstream`,
    });
    expect(upstream.statusCode).toBe(200);
    const chain = upstream.json().chain;
    expect(chain).toHaveLength(2);
    expect(chain[1]).toMatchObject({ correlation_id: null, emitted_by: 'init', route_id: 'generate' });
    expect(chain[0].correlation_id).toBe(chain[1].message_id);
    const missing = await test.app.inject({
      url: `/api/v1/executions/${run.id}/lineage/${unknownId}/upstream`,
    });
    expect(missing.statusCode).toBe(404);
  });

  /** generate -> sink, where the sink fails messages by `fail_every` (synthetic_sink). */
  const failingYaml = (count: number, failEvery: number, failure: string, maxAttempts = 3) => `
name: failing-run
routes:
  - id: generate
    adapters:
      - type: synthetic_fanout
        config: { count: ${count} }
        destination: sink
  - id: sink
    adapters:
      - type: synthetic_sink
        config: { fail_every: ${failEvery}, failure: ${failure} }
        retry: { max_attempts: ${maxAttempts}, backoff_ms: 0 }
`;
  async function runToEnd(text: string, body?: Record<string, unknown>) {
    const configId = await createConfig(text);
    const types: string[] = [];
    const unsubscribe = test.events.subscribe((event) => {
      if (event.type.startsWith('execution.')) types.push(event.type);
    });
    try {
      const run = await test.app.inject({
        method: 'POST',
        url: `/api/v1/configs/${configId}/run`,
        ...(body ? { payload: body } : {}),
      });
      expect(run.statusCode).toBe(201);
      const waited = (await wait(run.json().id)).json();
      const execution = (await test.app.inject({ url: `/api/v1/executions/${run.json().id}` })).json();
      const lineage = (
        await test.app.inject({ url: `/api/v1/executions/${run.json().id}/lineage?status=failed` })
      ).json();
      return { waited, execution, lineage, types };
    } finally {
      unsubscribe();
    }
  }

  it('ends a run whose every message failed as failed, with the first errors, and fires execution.failed', async () => {
    const { waited, execution, lineage, types } = await runToEnd(failingYaml(4, 1, 'permanent'));
    expect(waited).toMatchObject({
      completed: true,
      status: 'failed',
      statistics: { total_messages: 5, completed_messages: 1, failed_messages: 4, success_rate: 0.2 },
    });
    expect(waited.statistics.first_errors).toHaveLength(4);
    expect(waited.statistics.first_errors[0]).toMatchObject({
      route_id: 'sink',
      stage: 'synthetic_sink',
      error: expect.stringMatching(/^synthetic failure of message \d$/),
    });
    expect(execution.status).toBe('failed');
    expect(execution.error).toMatch(
      /^4 of 5 messages failed; first: sink\/synthetic_sink: synthetic failure/,
    );
    expect(types).toContain('execution.failed');
    expect(types).not.toContain('execution.completed');
    // Permanent failures are not retried, whatever the retry policy allows.
    expect(lineage.messages.map((message: { attempts: number }) => message.attempts)).toEqual([1, 1, 1, 1]);
  });

  it('retries transient failures up to max_attempts', async () => {
    const { waited, lineage } = await runToEnd(failingYaml(2, 1, 'transient', 2));
    expect(waited.status).toBe('failed');
    expect(lineage.messages.map((message: { attempts: number }) => message.attempts)).toEqual([2, 2]);
  });

  it('ends a run with partial failures completed, with the counts and the failures listed', async () => {
    const { waited, execution, types } = await runToEnd(failingYaml(4, 2, 'permanent'));
    expect(waited).toMatchObject({
      status: 'completed',
      statistics: { total_messages: 5, completed_messages: 3, failed_messages: 2 },
    });
    expect(waited.statistics.first_errors).toHaveLength(2);
    expect(execution.error).toBeNull();
    expect(types).toContain('execution.completed');
    const stages = await test.app.inject({ url: `/api/v1/executions/${execution.id}/stages` });
    expect(stages.json()).toEqual({
      execution_id: execution.id,
      stages: [
        { route_id: 'generate', stage: 'synthetic_fanout', queued: 0, completed: 1, failed: 0, skipped: 0 },
        { route_id: 'sink', stage: 'synthetic_sink', queued: 0, completed: 2, failed: 2, skipped: 0 },
      ],
    });
    expect((await test.app.inject({ url: `/api/v1/executions/${unknownId}/stages` })).statusCode).toBe(404);
  });

  it('refuses to run a config whose share root is outside the allowed roots (E211)', async () => {
    const configId = await createConfig(`
routes:
  - id: list
    adapters:
      - type: fileshare_enumerator
        config: { root: /etc }
`);
    const run = await test.app.inject({ method: 'POST', url: `/api/v1/configs/${configId}/run` });
    expect(run.statusCode).toBe(400);
    expect(JSON.stringify(run.json())).toContain('E211');
  });

  it('refuses to run routes that fan out in a cycle (E216); allowed, the message budget ends the run', async () => {
    const cycle = (header: string) => `${header}
routes:
  - id: ping
    adapters: [{ type: synthetic_fanout, config: { count: 2 }, destination: pong }]
  - id: pong
    adapters: [{ type: synthetic_fanout, config: { count: 2 }, destination: ping }]
`;
    const refused = await createConfig(cycle(''));
    const run = await test.app.inject({ method: 'POST', url: `/api/v1/configs/${refused}/run` });
    expect(run.statusCode).toBe(400);
    expect(JSON.stringify(run.json())).toContain('E216');
    const allowed = await createConfig(cycle('allow_fanout_cycles: true\nmax_messages_per_execution: 50'));
    const started = await test.app.inject({ method: 'POST', url: `/api/v1/configs/${allowed}/run` });
    expect(started.statusCode).toBe(201);
    const waited = (await wait(started.json().id, 20)).json();
    expect(waited).toMatchObject({ completed: true, status: 'failed' });
    const execution = (await test.app.inject({ url: `/api/v1/executions/${started.json().id}` })).json();
    expect(execution.error).toContain('created more than 50 messages (max_messages_per_execution)');
  });

  it('ends a run whose init message failed as failed (a share root outside the allowed roots)', async () => {
    const { waited, execution, lineage, types } = await runToEnd(
      `
name: outside-share
routes:
  - id: list
    adapters:
      - type: fileshare_enumerator
        destination: files
  - id: files
    adapters: [{ type: synthetic_sink }]
`,
      { root: '/etc' },
    );
    expect(waited).toMatchObject({ status: 'failed', statistics: { total_messages: 1, failed_messages: 1 } });
    expect(execution.error).toMatch(
      /1 of 1 messages failed; first: list\/fileshare_enumerator: share root \/etc is outside the allowed roots/,
    );
    expect(lineage.messages[0].attempts).toBe(1);
    expect(types).toEqual(expect.arrayContaining(['execution.started', 'execution.failed']));
  });
});

describe('engine endpoints without an orchestrator', () => {
  it('answer 503 on run and cancel', async () => {
    const app = await buildApp({ settings: loadSettings({}), registry: createBuiltinRegistry() });
    const run = await app.inject({ method: 'POST', url: `/api/v1/configs/${unknownId}/run` });
    expect(run.statusCode).toBe(503);
    expect(run.json()).toMatchObject({ code: 'orchestrator_unavailable' });
    expect(
      (await app.inject({ method: 'POST', url: `/api/v1/executions/${unknownId}/cancel` })).statusCode,
    ).toBe(503);
    await app.close();
  });
});
