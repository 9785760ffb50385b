/**
 * The per-execution message budget (issue 30): two routes fanning out to each other grew
 * without end (22,000 messages pending after 20 s). With `allow_fanout_cycles: true` such a
 * run is valid, and the budget ends it `failed`; on every database and broker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EARLY_OUTPUT_CHUNK } from '../src/engine/stage-processor.js';
import { engineCombinations } from './helpers/brokers.js';
import { createTestEngine, type TestEngine, waitForStatus } from './helpers/engine.js';

/** Two routes each emitting `count` messages per input into the other. */
const fanOutCycle = (header: string) => `
${header}
routes:
  - id: ping
    adapters: [{ type: synthetic_fanout, config: { count: 2 }, destination: pong }]
  - id: pong
    adapters: [{ type: synthetic_fanout, config: { count: 2 }, destination: ping }]
`;

const fanOut = (count: number, header = '') => `
${header}
routes:
  - id: generate
    adapters: [{ type: synthetic_fanout, config: { count: ${count} }, destination: sink }]
  - id: sink
    adapters: [{ type: synthetic_sink, concurrency: 8 }]
`;

/** The setting of this engine: small, so a cycle without a budget of its own passes it quickly. */
const SETTING = 1500;

describe.each(await engineCombinations())('message budget on $name', ({ database: target, broker }) => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await createTestEngine(target, {
      broker: await broker.open(),
      settings: { max_messages_per_execution: SETTING },
    });
  });
  afterAll(async () => {
    await engine?.close();
  });

  async function runToEnd(yaml: string, status: 'completed' | 'failed') {
    const config = await engine.configs.create({ config_yaml: yaml });
    expect(config.is_runnable).toBe(true);
    const execution = await engine.orchestrator.run(config.id);
    await waitForStatus(engine.repository, execution.id, status, 20_000);
    return (await engine.repository.findExecution(execution.id)) as NonNullable<
      Awaited<ReturnType<TestEngine['repository']['findExecution']>>
    >;
  }

  const budgetError = (id: string, budget: number) =>
    `execution ${id} created more than ${budget} messages (max_messages_per_execution); `;

  it('ends a fan-out cycle that the config allows as failed once it passes its budget', async () => {
    // Within 20 s (runToEnd's wait), where it grew by about 1,000 messages a second before.
    // A budget well past what the two stages hold (heldMessages(1): 65 each), so messages are
    // still queued when it is passed: at 200 and 500 the stages had taken and finished every
    // one by then in some runs (with 17 held each, 200 left some queued).
    const ended = await runToEnd(
      fanOutCycle('allow_fanout_cycles: true\nmax_messages_per_execution: 1000'),
      'failed',
    );
    expect(ended.error).toContain(budgetError(ended.id, 1000));
    expect(ended.created_messages).toBeLessThanOrEqual(1000);
    // The event follows the commit that failed it; then its processors are detached.
    const failedEvent = () =>
      engine.seen.find((event) => event.type === 'execution.failed' && event.execution_id === ended.id);
    const settled = Date.now() + 5000;
    while (
      (!failedEvent() || engine.orchestrator.attachedExecutions().includes(ended.id)) &&
      Date.now() < settled
    )
      await new Promise((resolve) => setTimeout(resolve, 25));
    expect(failedEvent()).toMatchObject({ status: 'failed', error: ended.error });
    expect(engine.orchestrator.attachedExecutions()).not.toContain(ended.id);
    // It stops: no message is created after the failure, and once the messages already in hand
    // have settled, no pending one is processed.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const before = await engine.repository.statistics(ended.id);
    expect(before.total_messages).toBe(ended.created_messages);
    expect(before.processing_messages).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await engine.repository.statistics(ended.id)).toEqual(before);
    expect(await engine.repository.findExecution(ended.id)).toMatchObject({
      status: 'failed',
      created_messages: ended.created_messages,
    });
  });

  it('bounds a run by the setting when the config sets no budget, and caps a higher one at it', async () => {
    const unset = await runToEnd(fanOutCycle('allow_fanout_cycles: true'), 'failed');
    expect(unset.error).toContain(budgetError(unset.id, SETTING));
    const higher = await runToEnd(
      fanOutCycle('allow_fanout_cycles: true\nmax_messages_per_execution: 1000000'),
      'failed',
    );
    expect(higher.error).toContain(budgetError(higher.id, SETTING));
  });

  it('leaves a run within its budget alone, up to the budget exactly', async () => {
    // The init message and its 50 children: 51 messages.
    const within = await runToEnd(fanOut(50, 'max_messages_per_execution: 51'), 'completed');
    expect(within).toMatchObject({ error: null, created_messages: 51, pending_messages: 0 });
    const over = await runToEnd(fanOut(50, 'max_messages_per_execution: 50'), 'failed');
    expect(over.error).toContain(budgetError(over.id, 50));
  });

  it('fails a large fan-out whose early outputs would pass the budget, and queues none of them', async () => {
    // Past EARLY_OUTPUT_CHUNK, outputs are queued in chunks before their parent's finish.
    expect(EARLY_OUTPUT_CHUNK + 1).toBeGreaterThan(SETTING);
    const ended = await runToEnd(fanOut(EARLY_OUTPUT_CHUNK * 2 + 10), 'failed');
    expect(ended.error).toContain(budgetError(ended.id, SETTING));
    expect(ended.created_messages).toBe(1);
    expect((await engine.repository.statistics(ended.id)).total_messages).toBe(1);
  });
});
