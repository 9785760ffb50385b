/**
 * Two orchestrators (two "instances") over one database and one broker: both work on the same
 * execution, completion is detected exactly once, and control through one reaches the other.
 */
import { uuidv7 } from 'uuidv7';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Broker } from '../src/broker/broker.js';
import type { Database } from '../src/db/database.js';
import { createEngine } from '../src/engine/create-engine.js';
import type { Orchestrator } from '../src/engine/orchestrator.js';
import { createEventBus, type WeirEvent } from '../src/events/event-bus.js';
import { engineCombinations } from './helpers/brokers.js';
import type { TestDatabase } from './helpers/databases.js';
import { createTestEngine, type TestEngine, waitForStatus } from './helpers/engine.js';

const yaml = (prefix: string, count: number) => `
routes:
  - id: ${prefix}-generate
    adapters:
      - type: synthetic_fanout
        config: { count: ${count} }
        destination: ${prefix}-sink
  - id: ${prefix}-sink
    adapters:
      - type: synthetic_sink
        config: { work_ms: 2 }
        concurrency: 2
`;

describe.each(await engineCombinations())('two instances on $name', ({ database, broker: brokerTarget }) => {
  let first: TestEngine;
  let second: Orchestrator;
  let secondBroker: Broker;
  let secondDatabase: Database;
  const secondEvents: WeirEvent[] = [];
  beforeAll(async () => {
    first = await createTestEngine(database, { broker: await brokerTarget.open() });
    // On the server the second instance has its own connection pool, so their statements
    // really run concurrently; PGlite is one connection in one process, so it is shared.
    secondDatabase = (await (first.database as TestDatabase).openAnotherHandle?.()) ?? first.database;
    // The in-process broker exists once per process, so the second instance shares it;
    // a STOMP instance gets a connection of its own, as a second process would.
    secondBroker = brokerTarget.name === 'memory' ? first.broker : await brokerTarget.open();
    const events = createEventBus();
    events.subscribe((event) => secondEvents.push(event));
    second = createEngine({
      database: secondDatabase,
      registry: first.registry,
      broker: secondBroker,
      storage: first.storage,
      events,
      now: () => new Date(),
      newId: uuidv7,
      logger: { info: () => {}, warn: () => {}, error: () => {} },
      pollIntervalMs: 100,
    }).orchestrator;
    await second.start();
  });
  afterAll(async () => {
    await second?.stop();
    if (secondBroker && secondBroker !== first?.broker) await secondBroker.close();
    if (secondDatabase && secondDatabase !== first?.database) await secondDatabase.close();
    await first?.close();
  });

  it('shares one execution between both instances and completes it once', async () => {
    const config = await first.configs.create({ config_yaml: yaml('shared', 300) });
    const execution = await first.orchestrator.run(config.id);
    await waitForStatus(first.repository, execution.id, 'completed', 60_000);
    expect(await first.repository.statistics(execution.id)).toMatchObject({
      total_messages: 301,
      completed_messages: 301,
      failed_messages: 0,
    });
    expect(second.counters().completed).toBeGreaterThan(0);
    expect(first.orchestrator.counters().completed).toBeGreaterThan(0);
    const completions = () => [
      ...first.seen.filter(
        (event) => event.type === 'execution.completed' && event.execution_id === execution.id,
      ),
      ...secondEvents.filter(
        (event) => event.type === 'execution.completed' && event.execution_id === execution.id,
      ),
    ];
    // The event follows the commit that the status poll sees: wait for it, then make sure no
    // second instance announces the same completion.
    for (let waited = 0; completions().length === 0 && waited < 10_000; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(completions()).toHaveLength(1);
  });

  it('applies a cancel made through the other instance', async () => {
    const config = await first.configs.create({ config_yaml: yaml('cancel', 5) });
    const execution = await first.orchestrator.run(config.id, { skipInitMessage: true });
    const attached = () => first.orchestrator.attachedExecutions().includes(execution.id);
    expect(attached()).toBe(true);
    await second.cancel(execution.id);
    const deadline = Date.now() + 5000;
    while (attached() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(attached()).toBe(false);
  });

  it('applies a pause and a resume made through the other instance', async () => {
    // Slow enough that either instance alone would still be at it when the pause is checked.
    const config = await first.configs.create({
      config_yaml: yaml('pause', 60).replace('work_ms: 2', 'work_ms: 100'),
    });
    const execution = await first.orchestrator.run(config.id);
    const completed = async () =>
      (
        await first.repository.lineage({
          execution_id: execution.id,
          status: 'completed',
          limit: 1,
          offset: 0,
        })
      ).total;
    while ((await completed()) < 3) await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await second.controlRoute('pause-sink', 'pause')).paused).toBe(true);
    // The first instance learns of it by polling (200 ms here); what it had started finishes.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const whilePaused = await completed();
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await completed()).toBe(whilePaused);
    expect(whilePaused).toBeLessThan(30);
    expect((await second.controlRoute('pause-sink', 'resume')).paused).toBe(false);
    await waitForStatus(first.repository, execution.id, 'completed', 30_000);
    expect(await completed()).toBe(61);
  });

  it('lets an API-only instance publish work that a worker instance processes', async () => {
    const apiOnly = createEngine({
      database: secondDatabase,
      registry: first.registry,
      broker: secondBroker,
      storage: first.storage,
      events: createEventBus(),
      now: () => new Date(),
      newId: uuidv7,
      logger: { info: () => {}, warn: () => {}, error: () => {} },
      processMessages: false,
    }).orchestrator;
    await apiOnly.start();
    const config = await first.configs.create({ config_yaml: yaml('split', 20) });
    const execution = await apiOnly.run(config.id);
    expect(apiOnly.attachedExecutions()).toEqual([]);
    await waitForStatus(first.repository, execution.id, 'completed', 30_000);
    expect((await first.repository.statistics(execution.id)).completed_messages).toBe(21);
    await apiOnly.stop();
  });
});
