/**
 * A large fan-out on the in-process broker is paced by its consumers: between chunks it waits
 * for the next stage's backlog to fall below a chunk (stage-processor.ts, backlogsBelow), so its
 * lineage rows are finished while they are still in the embedded database's buffers.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Broker } from '../src/broker/broker.js';
import { createMemoryBroker } from '../src/broker/memory.js';
import { EARLY_OUTPUT_CHUNK } from '../src/engine/stage-processor.js';
import { databaseTargets } from './helpers/databases.js';
import { createTestEngine, type TestEngine, waitForStatus } from './helpers/engine.js';

const count = EARLY_OUTPUT_CHUNK * 3;
const yaml = `
routes:
  - id: generate
    adapters:
      - type: synthetic_fanout
        config: { count: ${count} }
        destination: sink
  - id: sink
    adapters:
      - type: synthetic_sink
        concurrency: 64
`;

/** The in-process broker with its backlog waits held until the test lets them go. */
function gatedBroker() {
  const broker = createMemoryBroker();
  const calls: Array<{ queue: string; depth: number }> = [];
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const gated: Broker = {
    ...broker,
    backlogBelow: async (queue, depth) => {
      calls.push({ queue, depth });
      await gate;
      await broker.backlogBelow?.(queue, depth);
    },
  };
  return { broker: gated, calls, open };
}

describe.each(databaseTargets())('a large fan-out on $name', (target) => {
  let engine: TestEngine | undefined;
  afterEach(async () => {
    await engine?.close();
    engine = undefined;
  });

  it('waits for the next stage before writing its next chunk', { timeout: 180_000 }, async () => {
    const { broker, calls, open } = gatedBroker();
    engine = await createTestEngine(target, { broker });
    const config = await engine.configs.create({ config_yaml: yaml });
    const execution = await engine.orchestrator.run(config.id);
    const repository = engine.repository;
    // The first chunk is written and sent, then the fan-out asks for the sink's backlog.
    await expect.poll(() => calls.length, { timeout: 90_000 }).toBeGreaterThan(0);
    expect(calls[0]).toEqual({
      queue: `weir.${execution.id}.sink.synthetic_sink`,
      depth: EARLY_OUTPUT_CHUNK,
    });
    // While the wait lasts, no further chunk is queued: the init message and one chunk.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await repository.statistics(execution.id)).total_messages).toBe(EARLY_OUTPUT_CHUNK + 1);
    open();
    await waitForStatus(repository, execution.id, 'completed', 120_000);
    expect(await repository.statistics(execution.id)).toMatchObject({
      total_messages: count + 1,
      completed_messages: count + 1,
    });
    // A wait before every chunk after the first (the last part goes with the finish).
    expect(calls.length).toBe(count / EARLY_OUTPUT_CHUNK - 2);
  });
});
