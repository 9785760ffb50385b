/**
 * A stage's `concurrency` bounds its adapter calls, not the messages waiting for their finish to
 * be written: a stage holds more messages than it has slots (heldMessages), so the next message
 * reaches the adapter as soon as a call returns, and each is acknowledged only once its finish
 * is durable. Checked by holding every acknowledgement of the stage: the next messages still
 * reach the adapter (one at a time; before, the first held ack kept the only slot), and all are
 * recorded once let through.
 */
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAdapter } from '../src/adapters/adapter.js';
import { createBuiltinRegistry } from '../src/adapters/builtin.js';
import type { Broker } from '../src/broker/broker.js';
import { createMemoryBroker } from '../src/broker/memory.js';
import { heldMessages } from '../src/engine/stage-processor.js';
import { databaseTargets } from './helpers/databases.js';
import { createTestEngine, type TestEngine, waitForStatus } from './helpers/engine.js';

let active = 0;
let mostActive = 0;
let calls = 0;
const slowSink = defineAdapter({
  type: 'slow_sink',
  group: 'synthetic',
  summary: 'takes a few milliseconds per message and counts how many run at once',
  config: Type.Object({}),
  input: Type.Object({}),
  output: Type.Object({}),
  create: () => async () => {
    calls++;
    active++;
    mostActive = Math.max(mostActive, active);
    await new Promise((resolve) => setTimeout(resolve, 5));
    active--;
    return [];
  },
});

/** The in-process broker, with the acks of the queues ending in `queueSuffix` held until `letThrough()`. */
function ackHoldingBroker(queueSuffix: string): {
  broker: Broker;
  held: () => number;
  letThrough: () => void;
} {
  const inner = createMemoryBroker();
  let gate: (() => void) | undefined;
  const opened = new Promise<void>((resolve) => {
    gate = resolve;
  });
  let held = 0;
  const broker: Broker = {
    ...inner,
    kind: inner.kind,
    subscribe: (queue, options, handler) =>
      inner.subscribe(queue, options, (message) =>
        handler(
          queue.endsWith(queueSuffix)
            ? {
                body: message.body,
                headers: message.headers,
                deliveryCount: message.deliveryCount,
                nack: () => message.nack(),
                ack: async () => {
                  held++;
                  await opened;
                  await message.ack();
                },
              }
            : message,
        ),
      ),
  };
  return { broker, held: () => held, letThrough: () => gate?.() };
}

describe.each(databaseTargets())('stage concurrency and settling messages on $name', (target) => {
  let engine: TestEngine;
  let acks: ReturnType<typeof ackHoldingBroker>;

  beforeAll(async () => {
    acks = ackHoldingBroker('.slow_sink');
    const registry = createBuiltinRegistry();
    registry.register(slowSink);
    engine = await createTestEngine(target, { broker: acks.broker, registry });
  });
  afterAll(() => engine?.close());

  it('runs the next messages while earlier ones wait for their acks, one adapter call at a time', async () => {
    calls = 0;
    mostActive = 0;
    const held = heldMessages(1); // the default concurrency of 1
    const count = held + 8; // more than the stage holds: the rest must wait in the queue
    const config = await engine.configs.create({
      config_yaml: `
routes:
  - id: main
    adapters:
      - type: synthetic_fanout
        config: { count: ${count} }
      - type: slow_sink
`,
    });
    const execution = await engine.orchestrator.run(config.id);
    const deadline = Date.now() + 20_000;
    while ((calls < held || acks.held() < held) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 100)); // no more should come
    // Messages past the one slot reached the adapter though none of the stage's acks has gone
    // through, up to what a stage holds; the rest wait in the queue.
    // The settling floor: a stage of concurrency 1 holds more than four messages (the finish,
    // the sends and the ack take the same time whatever the stage's concurrency).
    expect(held).toBeGreaterThan(4);
    expect(calls).toBe(held);
    expect(acks.held()).toBe(held);
    expect(mostActive).toBe(1); // concurrency 1 still bounds the adapter calls
    acks.letThrough();
    await waitForStatus(engine.repository, execution.id, 'completed');
    expect(calls).toBe(count);
    expect(await engine.repository.statistics(execution.id)).toMatchObject({
      total_messages: count + 1,
      completed_messages: count + 1,
    });
  });
});
