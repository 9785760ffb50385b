/**
 * The webhook event outbox (migration 0012): an execution or failure event whose state change
 * committed reaches its subscribers once, even when the instance that raised it died before
 * recording it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createConfigsRepository } from '../src/db/configs-repository.js';
import type { Database } from '../src/db/database.js';
import { createExecutionsRepository, type ExecutionsRepository } from '../src/db/executions-repository.js';
import { createWebhooksRepository, type WebhooksRepository } from '../src/db/webhooks-repository.js';
import {
  createEventBus,
  type EventBus,
  type LineageFailedEvent,
  type WeirEvent,
} from '../src/events/event-bus.js';
import { createAddressPolicy } from '../src/webhooks/address-policy.js';
import { createDispatcher, type Dispatcher } from '../src/webhooks/dispatcher.js';
import { createSender } from '../src/webhooks/sender.js';
import { databaseTargets } from './helpers/databases.js';
import { startWebhookReceiver, type WebhookReceiver } from './helpers/webhook-receiver.js';

const loopback = createAddressPolicy(['127.0.0.0/8']);
/** Past the dispatcher's grace for rows their own instance records (OUTBOX_GRACE_MS). */
const PAST_GRACE_MS = 31_000;

describe.each(databaseTargets())('webhook event outbox on $name', (target) => {
  let database: Database;
  let webhooks: WebhooksRepository;
  let executions: ExecutionsRepository;
  let receiver: WebhookReceiver;
  let clock: Date;
  let configId: string;
  const dispatchers: Dispatcher[] = [];

  /** A dispatcher, listening on `events` when given (the instance that raised them). */
  function dispatcher(events?: EventBus) {
    const created = createDispatcher({
      repository: webhooks,
      sender: createSender({ policy: loopback, timeoutMs: 2000, maxSockets: 4 }),
      events,
      now: () => clock,
      timeoutMs: 2000,
      onError: (error) => {
        throw error;
      },
    });
    dispatchers.push(created);
    return created;
  }

  async function subscribe(eventTypes: string[]) {
    return webhooks.createSubscription({
      webhook_id: crypto.randomUUID(),
      url: receiver.url,
      secret: receiver.secret,
      event_types: eventTypes,
      filters: {},
      enabled: true,
      now: clock,
    });
  }

  async function startExecution(withInit = false) {
    const id = crypto.randomUUID();
    const init = withInit
      ? {
          message_id: crypto.randomUUID(),
          correlation_id: crypto.randomUUID(),
          route_id: 'fetch',
          stage: 'fetch',
          emitted_by: 'init',
          envelope: new Uint8Array([1]),
        }
      : undefined;
    const row = await executions.createExecution({
      id,
      config_id: configId,
      config_version: 1,
      config_hash: 'h',
      config_yaml: 'name: c1',
      tag: null,
      skip_init_message: !withInit,
      init_payload: {},
      init,
      now: clock,
    });
    return { row, init };
  }

  /** The event the orchestrator raises on its bus for the started execution. */
  function startedEvent(executionId: string): WeirEvent {
    return {
      type: 'execution.started',
      execution_id: executionId,
      config_id: configId,
      status: 'running',
      timestamp: clock.toISOString(),
      error: null,
    };
  }

  async function outboxRows() {
    return database.db
      .selectFrom('webhook_event_outbox')
      .select(['event_type', 'subject_id', 'recorded'])
      .orderBy('event_type')
      .execute();
  }

  async function deliveryCount() {
    const row = await database.db
      .selectFrom('webhook_deliveries')
      .select((expression) => expression.fn.countAll<string>().as('count'))
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  beforeEach(async () => {
    database = await target.open();
    webhooks = createWebhooksRepository(database.db);
    executions = createExecutionsRepository(database.db);
    receiver = await startWebhookReceiver();
    clock = new Date('2030-01-01T00:00:00Z');
    configId = crypto.randomUUID();
    await createConfigsRepository(database.db).insert({
      id: configId,
      name: 'c1',
      description: null,
      origin: 'api',
      config_yaml: 'routes: []',
      config_hash: 'h',
      now: clock,
    });
  });

  afterEach(async () => {
    for (const created of dispatchers.splice(0)) await created.stop();
    await receiver.close();
    await database.close();
  });

  it('keeps nothing while no subscription exists', async () => {
    await startExecution();
    expect(await outboxRows()).toEqual([]);
  });

  it('delivers, once, an execution event whose instance died before recording it', async () => {
    const subscription = await subscribe(['execution.started']);
    const { row } = await startExecution();
    expect(await outboxRows()).toEqual([
      { event_type: 'execution.started', subject_id: row.id, recorded: false },
    ]);

    // Another instance's dispatcher: it never heard the event. Within the grace it waits.
    const survivor = dispatcher();
    expect(await survivor.poll()).toBe(0);
    clock = new Date(clock.getTime() + PAST_GRACE_MS);
    expect(await survivor.poll()).toBe(1);
    const [received] = await receiver.waitFor(1);
    expect(received?.verificationError).toBeNull();
    expect(received?.json).toMatchObject({
      type: 'execution.started',
      created_at: '2030-01-01T00:00:00.000Z',
      data: { execution_id: row.id, config_id: configId, status: 'running', error: null },
    });
    const { rows } = await webhooks.listDeliveries(subscription.webhook_id, { limit: 10, offset: 0 });
    expect(rows.map((delivery) => delivery.status)).toEqual(['delivered']);
    // The row stays, marked, so a dispatcher that hears the event this late leaves it alone.
    expect(await outboxRows()).toEqual([
      { event_type: 'execution.started', subject_id: row.id, recorded: true },
    ]);
    expect(await survivor.poll()).toBe(0);
  });

  it('records the event its own instance hears and leaves nothing for a sweep', async () => {
    await subscribe(['execution.started']);
    const events = createEventBus((error) => {
      throw error;
    });
    const live = dispatcher(events);
    const { row } = await startExecution();
    events.emit(startedEvent(row.id));
    await live.flush();
    expect(await outboxRows()).toEqual([]);
    expect(await live.poll()).toBe(1);
    clock = new Date(clock.getTime() + PAST_GRACE_MS);
    expect(await live.poll()).toBe(0);
    await receiver.waitFor(1);
    expect(await deliveryCount()).toBe(1);
  });

  it('does not record twice an event heard after a sweep recorded it', async () => {
    await subscribe(['execution.started']);
    const { row } = await startExecution();
    clock = new Date(clock.getTime() + PAST_GRACE_MS);
    const sweeper = dispatcher();
    expect(await sweeper.poll()).toBe(1);
    // The raising instance was only slow: its dispatcher hears the event now.
    const events = createEventBus((error) => {
      throw error;
    });
    const late = dispatcher(events);
    events.emit(startedEvent(row.id));
    await late.flush();
    expect(await late.poll()).toBe(0);
    expect(await deliveryCount()).toBe(1);
  });

  it('keeps the failure of a message and the end of its execution with the finish that records them', async () => {
    await subscribe(['lineage.failed', 'execution.failed', 'execution.completed']);
    const { row, init } = await startExecution(true);
    const message = init as NonNullable<typeof init>;
    const failedEvent: LineageFailedEvent = {
      type: 'lineage.failed',
      execution_id: row.id,
      config_id: configId,
      route_id: 'fetch',
      adapter_name: 'http_fetch',
      message_id: message.message_id,
      correlation_id: message.correlation_id,
      error: 'HTTP 500',
      timestamp: clock.toISOString(),
    };
    const [outcome] = await executions.finishMessages([
      {
        message: {
          message_id: message.message_id,
          execution_id: row.id,
          started_at: clock,
          finished_at: clock,
          attempts: 3,
        },
        status: 'failed',
        error: 'HTTP 500',
        outputs: [],
        failedEvent,
      },
    ]);
    expect(outcome?.applied).toBe(true);
    const ended = outcome?.finishedExecution?.status as string;
    expect(await outboxRows()).toEqual([
      { event_type: `execution.${ended}`, subject_id: row.id, recorded: false },
      { event_type: 'execution.started', subject_id: row.id, recorded: false },
      { event_type: 'lineage.failed', subject_id: message.message_id, recorded: false },
    ]);

    clock = new Date(clock.getTime() + PAST_GRACE_MS);
    expect(await dispatcher().poll()).toBe(2);
    const received = await receiver.waitFor(2);
    const failure = received.find((delivery) => delivery.json.type === 'lineage.failed');
    expect(failure?.json.data).toMatchObject({
      message_id: message.message_id,
      adapter_name: 'http_fetch',
      error: 'HTTP 500',
    });
    expect(received.map((delivery) => delivery.json.type).sort()).toEqual([
      `execution.${ended}`,
      'lineage.failed',
    ]);
  });

  it('holds one delivery per event and subscription', async () => {
    const subscription = await subscribe(['execution.started']);
    const insert = () =>
      database.db
        .insertInto('webhook_deliveries')
        .values({
          delivery_id: crypto.randomUUID(),
          webhook_id: subscription.webhook_id,
          event_id: 'event-1',
          event_type: 'execution.started',
          body: '{}',
          status: 'pending',
          next_attempt_at: clock,
          created_at: clock,
        })
        .execute();
    await insert();
    await expect(insert()).rejects.toThrow(/duplicate key/);
  });
});
