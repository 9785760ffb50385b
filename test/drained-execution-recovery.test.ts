/**
 * A finish drains an execution in one statement and ends it in the next
 * (src/db/finish-statement.ts). An instance killed between the two leaves the execution running
 * with nothing pending; the orchestrator ends it, with its outcome and its event, when it starts
 * and on its poll. An execution started with skip_init_message has nothing pending either, and
 * stays running: it waits for a replay.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { uuidv7 } from 'uuidv7';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuiltinRegistry } from '../src/adapters/builtin.js';
import { createMemoryBroker } from '../src/broker/memory.js';
import { createEngine } from '../src/engine/create-engine.js';
import { createEventBus, type WeirEvent } from '../src/events/event-bus.js';
import { createFilesystemObjectStore } from '../src/storage/fs.js';
import { databaseTargets, type TestDatabase } from './helpers/databases.js';

const yaml =
  'routes:\n  - id: m\n    adapters:\n      - type: synthetic_fanout\n        config: { count: 1 }\n';

describe.each(databaseTargets())('an execution left drained, on $name', (target) => {
  let database: TestDatabase;
  let dataDir: string;
  let engine: ReturnType<typeof createEngine>;
  const events: WeirEvent[] = [];
  let configId: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'weir-drained-'));
    database = await target.open();
    const bus = createEventBus();
    bus.subscribe((event) => {
      events.push(event);
    });
    engine = createEngine({
      database,
      registry: createBuiltinRegistry(),
      broker: createMemoryBroker(),
      storage: createFilesystemObjectStore(path.join(dataDir, 'objects')),
      events: bus,
      now: () => new Date(),
      newId: uuidv7,
      logger: { info: () => {}, warn: () => {}, error: () => {} },
      pollIntervalMs: 100,
    });
    const config = await engine.configs.create({
      config_yaml: yaml,
    });
    configId = config.id;
  });
  afterAll(async () => {
    await engine?.orchestrator.stop();
    await database?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  /**
   * An execution as the first statement of a finish leaves it when its init message failed:
   * the message failed, nothing pending, still running. With `skipInit`, one that never had a
   * message.
   */
  async function leftDrained(skipInit = false): Promise<string> {
    const id = uuidv7();
    const init = {
      message_id: uuidv7(),
      correlation_id: null,
      route_id: 'm',
      stage: 'synthetic_fanout',
      emitted_by: 'init',
      envelope: new Uint8Array([1]),
    };
    await engine.executions.createExecution({
      id,
      config_id: configId,
      config_version: 1,
      config_hash: 'h',
      config_yaml: yaml,
      tag: null,
      skip_init_message: skipInit,
      init_payload: {},
      init: skipInit ? undefined : init,
      now: new Date(),
    });
    if (skipInit) return id;
    await sql`update lineage set status = 'failed', error = 'no root', envelope = null, finished_at = now()
              where message_id = ${init.message_id}`.execute(database.db);
    await sql`update executions set pending_messages = 0 where id = ${id}`.execute(database.db);
    return id;
  }

  const ended = (id: string) =>
    events.find(
      (event) => event.type === 'execution.failed' && 'execution_id' in event && event.execution_id === id,
    );

  it('ends it failed with its outcome at start and on the poll; one that never had a message waits', async () => {
    const atStart = await leftDrained();
    const waiting = await leftDrained(true);
    await engine.orchestrator.start();
    expect(await engine.executions.findExecution(atStart)).toMatchObject({
      status: 'failed',
      outcome: 'failed',
      error: '1 of 1 messages failed; first: m/synthetic_fanout: no root',
    });
    expect(ended(atStart)).toMatchObject({ status: 'failed', outcome: 'failed' });
    const onPoll = await leftDrained();
    await expect.poll(() => ended(onPoll), { timeout: 10_000 }).toBeDefined();
    expect(await engine.executions.findExecution(onPoll)).toMatchObject({
      status: 'failed',
      outcome: 'failed',
    });
    expect(await engine.executions.findExecution(waiting)).toMatchObject({
      status: 'running',
      pending_messages: 0,
    });
  });
});
