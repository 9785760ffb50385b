import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAdapter, MessageSkipped } from '../src/adapters/adapter.js';
import { createBuiltinRegistry } from '../src/adapters/builtin.js';
import { EARLY_OUTPUT_CHUNK } from '../src/engine/stage-processor.js';
import { itWhere } from './helpers/applies.js';
import { engineCombinations } from './helpers/brokers.js';
import { createTestEngine, type TestEngine, waitForStatus } from './helpers/engine.js';

const fanoutYaml = (count: number, payloadBytes = 0) => `
name: fanout
routes:
  - id: generate
    adapters:
      - type: synthetic_fanout
        config: { count: ${count}, payload_bytes: ${payloadBytes} }
        destination: sink
  - id: sink
    adapters:
      - type: synthetic_sink
        concurrency: 8
`;

let flakyCalls = 0;
const flaky = defineAdapter({
  type: 'flaky_step',
  group: 'synthetic',
  summary: 'fails on the first attempts, or always when told to',
  config: Type.Object({ failures: Type.Integer({ default: 1 }) }),
  input: Type.Object({}),
  output: Type.Object({}),
  create: (config) => async (payload) => {
    flakyCalls++;
    if ((payload.index as number) % 2 === 1 && (config.failures < 0 || flakyCalls <= config.failures)) {
      throw new Error(`flaky failure ${flakyCalls}`);
    }
    return [{ payload }];
  },
});

const combinations = await engineCombinations();

/** Parent lineage status seen by the first message a `parent_probe` stage receives. */
let probeRepository: TestEngine['repository'] | undefined;
let parentStatusAtFirstChild: Promise<string | undefined> | undefined;
const parentProbe = defineAdapter({
  type: 'parent_probe',
  group: 'synthetic',
  summary: 'looks up its parent message in lineage on its first call, then passes inputs through',
  config: Type.Object({}),
  input: Type.Object({}),
  output: Type.Object({}),
  create: () => async (_payload, context) => {
    if (!parentStatusAtFirstChild && probeRepository) {
      const repository = probeRepository;
      parentStatusAtFirstChild = repository.upstream(context.correlationId).then((chain) => chain[0]?.status);
    }
    return [];
  },
});

const writer = defineAdapter({
  type: 'writer_step',
  group: 'synthetic',
  summary: 'writes each input as a stage output object',
  config: Type.Object({}),
  input: Type.Object({}),
  output: Type.Object({}),
  create: () => async (payload, context) => {
    const info = await context.writeObject(`item-${payload.index as number}.json`, JSON.stringify(payload), {
      contentType: 'application/json',
    });
    return [{ payload: { storage_key: info.key } }];
  },
});

const unencodable = defineAdapter({
  type: 'unencodable_step',
  group: 'synthetic',
  summary: 'emits an output that cannot be encoded, so recording it always fails',
  config: Type.Object({}),
  input: Type.Object({}),
  output: Type.Object({}),
  create: () => async () => [{ payload: { value: Symbol('not encodable') } as never }],
});

let skipperCalls = 0;
const skipper = defineAdapter({
  type: 'skipper_step',
  group: 'synthetic',
  summary: 'skips odd inputs, as a fetcher skips a page answering 404',
  config: Type.Object({}),
  input: Type.Object({}),
  output: Type.Object({}),
  create: () => async (payload) => {
    skipperCalls++;
    if ((payload.index as number) % 2 === 1) throw new MessageSkipped(`item ${payload.index as number}: 404`);
    return [{ payload }];
  },
});

const unstartable = defineAdapter({
  type: 'unstartable_step',
  group: 'synthetic',
  summary: 'cannot be created (as an adapter whose model file is missing)',
  config: Type.Object({}),
  input: Type.Object({}),
  output: Type.Object({}),
  create: () => {
    throw new Error('model file missing');
  },
});

const batchSizes: number[] = [];
/** What the stage after a batch stage saw: the envelope's batch_id and the payload. */
const afterBatch: Array<{ batchId: string | undefined; payload: Record<string, unknown> }> = [];
const batchProbe = defineAdapter({
  type: 'batch_probe',
  group: 'synthetic',
  summary: "records each input's batch id",
  config: Type.Object({}),
  input: Type.Object({}),
  output: Type.Object({}),
  create: () => async (payload, context) => {
    afterBatch.push({ batchId: context.batchId, payload });
    return [];
  },
});
const batching = defineAdapter({
  type: 'batch_counter',
  group: 'synthetic',
  summary: 'accepts batches; answers each message with the size of its batch, plus one aggregate',
  config: Type.Object({}),
  input: Type.Object({}),
  output: Type.Object({}),
  batch: true,
  create: () => async (payload) => {
    const messages = payload.messages as Array<{ payload: { index: number } }>;
    batchSizes.push(messages.length);
    return [
      ...messages.map((message, index) => ({
        payload: { index: message.payload.index, batch_size: messages.length, batch_id: payload.batch_id },
        batchIndex: index,
      })),
      { payload: { aggregate: true, count: messages.length } },
    ];
  },
});

describe.each(combinations)('engine on $name', ({ database: target, broker: brokerTarget }) => {
  let engine: TestEngine;
  beforeAll(async () => {
    const registry = createBuiltinRegistry();
    registry.register(flaky);
    registry.register(writer);
    registry.register(unencodable);
    registry.register(batching);
    registry.register(skipper);
    registry.register(parentProbe);
    registry.register(unstartable);
    registry.register(batchProbe);
    engine = await createTestEngine(target, { registry, broker: await brokerTarget.open() });
    probeRepository = engine.repository;
  });
  afterAll(async () => {
    await engine?.close();
  });

  /**
   * Waits until `count` events on the bus match (10 s at most). An event goes on the bus after
   * the commit it reports, so a test that saw the status in the database waits for it.
   */
  async function waitForEvent(type: string, executionId: string, count = 1): Promise<void> {
    const deadline = Date.now() + 10_000;
    const matches = (event: (typeof engine.seen)[number]) =>
      event.type === type && event.execution_id === executionId;
    while (engine.seen.filter(matches).length < count) {
      if (Date.now() > deadline) throw new Error('the awaited event never came');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  it('runs a fan-out into a sink to completion, with lineage for every message', async () => {
    const config = await engine.configs.create({ config_yaml: fanoutYaml(200) });
    const execution = await engine.orchestrator.run(config.id);
    // run() answers the row as it is after the init message is published: on a fast broker
    // the 201 messages can all finish before that read (seen on PostgreSQL + STOMP).
    expect(['running', 'completed']).toContain(execution.status);
    await waitForStatus(engine.repository, execution.id, 'completed');
    expect(await engine.repository.statistics(execution.id)).toMatchObject({
      total_messages: 201,
      completed_messages: 201,
      failed_messages: 0,
      processing_messages: 0,
      success_rate: 1,
    });
    await waitForEvent('execution.completed', execution.id);
    const types = engine.seen
      .filter((event) => event.execution_id === execution.id)
      .map((event) => event.type);
    expect(types).toEqual(['execution.started', 'execution.completed']);
    const lineage = await engine.repository.lineage({
      execution_id: execution.id,
      stage: 'synthetic_sink',
      limit: 1,
      offset: 0,
    });
    expect(lineage.total).toBe(200);
    expect(lineage.messages[0]).toMatchObject({
      route_id: 'sink',
      emitted_by: 'synthetic_fanout',
      status: 'completed',
    });
  });

  it('starts the next stage on a large fan-out before its last outputs are written', async () => {
    parentStatusAtFirstChild = undefined;
    const count = EARLY_OUTPUT_CHUNK * 5;
    const yaml = `
routes:
  - id: generate
    adapters:
      - type: synthetic_fanout
        config: { count: ${count} }
        destination: probe
  - id: probe
    adapters:
      - type: parent_probe
        concurrency: 64
`;
    const config = await engine.configs.create({ config_yaml: yaml });
    const execution = await engine.orchestrator.run(config.id);
    await waitForStatus(engine.repository, execution.id, 'completed', 60_000);
    // The fan-out message was still queued (not finished) when its first child was handled.
    expect(await parentStatusAtFirstChild).toBe('queued');
    expect(await engine.repository.statistics(execution.id)).toMatchObject({
      total_messages: count + 1,
      completed_messages: count + 1,
      processing_messages: 0,
    });
  });

  it('writes stage outputs with sidecars and announces each on the event bus and the topic', async () => {
    const announced: Array<Record<string, unknown>> = [];
    await engine.broker.subscribeTopic('system.storage.events', (body) => {
      announced.push(JSON.parse(new TextDecoder().decode(body)));
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const yaml = `
routes:
  - id: write
    adapters:
      - type: synthetic_fanout
        config: { count: 3 }
      - type: writer_step
      - type: synthetic_sink
`;
    const config = await engine.configs.create({ config_yaml: yaml });
    const execution = await engine.orchestrator.run(config.id);
    await waitForStatus(engine.repository, execution.id, 'completed');
    const listed = await engine.storage.list({ prefix: `${execution.id}/writer_step/` });
    expect(listed.objects.map((object) => object.key)).toEqual(
      [0, 1, 2].map((index) => `${execution.id}/writer_step/item-${index}.json`),
    );
    expect(listed.objects[0]?.metadata).toMatchObject({
      execution_id: execution.id,
      config_id: config.id,
      route_id: 'write',
      stage: 'writer_step',
      adapter_name: 'writer_step',
    });
    const events = engine.seen.filter(
      (event) => event.type === 'storage.object_created' && event.execution_id === execution.id,
    );
    expect(events).toHaveLength(3);
    const deadline = Date.now() + 5000;
    while (
      announced.filter((event) => event.execution_id === execution.id).length < 3 &&
      Date.now() < deadline
    ) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const mine = announced.filter((event) => event.execution_id === execution.id);
    expect(mine).toHaveLength(3);
    expect(mine[0]).toMatchObject({
      event: 'storage.object.created',
      stage: 'writer_step',
      content_type: 'application/json',
    });
    expect(String(mine[0]?.event_id)).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('fails a message after a bounded number of failed deliveries instead of cycling', async () => {
    const yaml =
      'routes:\n  - id: poison\n    adapters:\n      - type: unencodable_step\n      - type: synthetic_sink\n';
    const config = await engine.configs.create({ config_yaml: yaml });
    const execution = await engine.orchestrator.run(config.id);
    // Its only message failed: the execution failed too.
    await waitForStatus(engine.repository, execution.id, 'failed', 30_000);
    const failed = await engine.repository.lineage({
      execution_id: execution.id,
      status: 'failed',
      limit: 5,
      offset: 0,
    });
    expect(failed.total).toBe(1);
    expect(failed.messages[0]?.error).toMatch(/^gave up after 3 deliveries/);
    await waitForEvent('lineage.failed', execution.id);
  });

  it('hands a batch stage several messages at once and records each with its own outputs', async () => {
    batchSizes.length = 0;
    const yaml = `
routes:
  - id: batched
    adapters:
      - type: synthetic_fanout
        config: { count: 10 }
      - type: batch_counter
        batch: { size: 4, max_wait_ms: 50 }
      - type: batch_probe
`;
    afterBatch.length = 0;
    const config = await engine.configs.create({ config_yaml: yaml });
    expect(config.is_runnable).toBe(true);
    const execution = await engine.orchestrator.run(config.id);
    await waitForStatus(engine.repository, execution.id, 'completed');
    expect(batchSizes.reduce((total, size) => total + size, 0)).toBe(10);
    expect(Math.max(...batchSizes)).toBeLessThanOrEqual(4);
    expect(batchSizes.length).toBeLessThan(10);
    // 1 init + 10 fan-out outputs + one output per input and one aggregate per batch
    const statistics = await engine.repository.statistics(execution.id);
    expect(statistics).toMatchObject({ failed_messages: 0, total_messages: 1 + 10 + 10 + batchSizes.length });
    // Every output of the batch stage carries its batch's id in the envelope: the one the
    // adapter was handed (in the per-input outputs' payloads), shared by the batch's aggregate.
    expect(afterBatch).toHaveLength(10 + batchSizes.length);
    const perInput = afterBatch.filter((seen) => seen.payload.aggregate !== true);
    expect(
      perInput.every((seen) => seen.batchId !== undefined && seen.batchId === seen.payload.batch_id),
    ).toBe(true);
    const batchIds = new Set(perInput.map((seen) => seen.batchId));
    expect(batchIds.size).toBe(batchSizes.length);
    const aggregates = afterBatch.filter((seen) => seen.payload.aggregate === true);
    expect(new Set(aggregates.map((seen) => seen.batchId))).toEqual(batchIds);
    const invalid = await engine.configs.create({
      config_yaml: 'routes:\n  - id: b\n    adapters: [{ type: synthetic_sink, batch: { size: 2 } }]\n',
    });
    expect(invalid.validation_report.findings.map((finding) => finding.code)).toEqual(['E210']);
  });

  it('offloads large payloads through storage and still completes', async () => {
    const config = await engine.configs.create({ config_yaml: fanoutYaml(3, 20_000) });
    const execution = await engine.orchestrator.run(config.id);
    await waitForStatus(engine.repository, execution.id, 'completed');
    const offloaded = await engine.storage.list({ prefix: `${execution.id}/_payloads/` });
    expect(offloaded.objects).toHaveLength(3);
  });

  it('retries a failing adapter, then records failures and fires lineage.failed', async () => {
    flakyCalls = 0;
    const yaml = `
routes:
  - id: generate
    adapters:
      - type: synthetic_fanout
        config: { count: 4 }
      - type: flaky_step
        config: { failures: -1 }
        retry: { max_attempts: 2, backoff_ms: 10 }
      - type: synthetic_sink
`;
    const config = await engine.configs.create({ config_yaml: yaml });
    const execution = await engine.orchestrator.run(config.id);
    await waitForStatus(engine.repository, execution.id, 'completed');
    const statistics = await engine.repository.statistics(execution.id);
    expect(statistics).toMatchObject({ total_messages: 7, completed_messages: 5, failed_messages: 2 });
    const failed = await engine.repository.lineage({
      execution_id: execution.id,
      status: 'failed',
      limit: 10,
      offset: 0,
    });
    expect(failed.messages.map((row) => row.attempts)).toEqual([2, 2]);
    expect(failed.messages[0]?.error).toMatch(/flaky failure/);
    // Each lineage.failed goes on the bus once its own finish has returned. The two failing
    // messages finish concurrently, and on a connection pool the finish that ends the execution
    // can return before the other: execution.completed then comes before the other's
    // lineage.failed (seen on 'postgres + memory'). So wait for both, in any order.
    const failedHere = (event: (typeof engine.seen)[number]) =>
      event.type === 'lineage.failed' && event.execution_id === execution.id;
    await waitForEvent('lineage.failed', execution.id, 2);
    const events = engine.seen.filter(failedHere);
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({ route_id: 'generate', adapter_name: 'flaky_step' });
  });

  it('records a skipped message as skipped, without retries or lineage.failed', async () => {
    skipperCalls = 0;
    const yaml = `
routes:
  - id: generate
    adapters:
      - type: synthetic_fanout
        config: { count: 4 }
      - type: skipper_step
        retry: { max_attempts: 3, backoff_ms: 10 }
      - type: synthetic_sink
`;
    const config = await engine.configs.create({ config_yaml: yaml });
    const execution = await engine.orchestrator.run(config.id);
    await waitForStatus(engine.repository, execution.id, 'completed');
    expect(skipperCalls).toBe(4);
    const skipped = await engine.repository.lineage({
      execution_id: execution.id,
      status: 'skipped',
      limit: 10,
      offset: 0,
    });
    expect(skipped.messages.map((row) => row.error).sort()).toEqual(['item 1: 404', 'item 3: 404']);
    expect(
      engine.seen.some((event) => event.type === 'lineage.failed' && event.execution_id === execution.id),
    ).toBe(false);
  });

  it('merges run payload overrides into the YAML defaults, and refuses a reused tag', async () => {
    const yaml = `${fanoutYaml(1)}init_message:\n  payload: { a: 1, b: 2 }\n`;
    const config = await engine.configs.create({ config_yaml: yaml });
    const execution = await engine.orchestrator.run(config.id, { payload: { b: 3 }, tag: 'merge-test' });
    expect(execution.init_payload).toEqual({ a: 1, b: 3 });
    expect(execution.tag).toBe('merge-test');
    await expect(engine.orchestrator.run(config.id, { tag: 'merge-test' })).rejects.toMatchObject({
      status: 400,
    });
  });

  it('refuses to run an invalid config with its validation report', async () => {
    const config = await engine.configs.create({
      config_yaml: 'routes:\n  - id: a\n    adapters: [{ type: nope }]\n',
    });
    await expect(engine.orchestrator.run(config.id)).rejects.toMatchObject({
      status: 400,
      body: { is_valid: false, error_count: 1 },
    });
  });

  it('fails an execution whose stages cannot start, with execution.failed', async () => {
    const config = await engine.configs.create({
      config_yaml:
        'routes:\n  - id: u\n    adapters: [{ type: synthetic_sink }, { type: unstartable_step }]\n',
    });
    const execution = await engine.orchestrator.run(config.id);
    await waitForStatus(engine.repository, execution.id, 'failed');
    const row = await engine.repository.findExecution(execution.id);
    expect(row).toMatchObject({ status: 'failed', error: 'cannot start: model file missing' });
    expect(row?.finished_at).toBeInstanceOf(Date);
    await waitForEvent('execution.failed', execution.id);
    const events = engine.seen.filter((event) => event.execution_id === execution.id);
    expect(events.map((event) => event.type)).toEqual(['execution.started', 'execution.failed']);
    expect(events[1]).toMatchObject({ status: 'failed', error: 'cannot start: model file missing' });
  });

  it('keeps an execution started without its init message running until cancelled', async () => {
    const config = await engine.configs.create({ config_yaml: fanoutYaml(5) });
    const execution = await engine.orchestrator.run(config.id, { skipInitMessage: true });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await engine.repository.findExecution(execution.id))?.status).toBe('running');
    expect((await engine.repository.statistics(execution.id)).total_messages).toBe(0);
    const cancelled = await engine.orchestrator.cancel(execution.id);
    expect(cancelled.status).toBe('cancelled');
    expect(
      engine.seen.filter((event) => event.execution_id === execution.id).map((event) => event.type),
    ).toEqual(['execution.started', 'execution.cancelled']);
    expect((await engine.orchestrator.cancel(execution.id)).status).toBe('cancelled');
  });

  itWhere(brokerTarget.name === 'stomp')(
    'completes with nothing lost when the broker connection is cut mid-run',
    async () => {
      const broker = engine.broker as { dropConnection?: () => void };
      const config = await engine.configs.create({ config_yaml: fanoutYaml(1000) });
      const execution = await engine.orchestrator.run(config.id);
      let cuts = 0;
      while (cuts < 3) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        const progress = await engine.repository.statistics(execution.id);
        if (progress.processing_messages === 0 && progress.total_messages > 1) break;
        broker.dropConnection?.();
        cuts++;
      }
      expect(cuts).toBeGreaterThan(0); // the connection was cut while messages were pending
      await waitForStatus(engine.repository, execution.id, 'completed', 60_000);
      expect(await engine.repository.statistics(execution.id)).toMatchObject({
        total_messages: 1001,
        completed_messages: 1001,
        failed_messages: 0,
      });
    },
  );
});
