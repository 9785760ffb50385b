/**
 * What the webhook dispatcher tests (test/webhooks-dispatcher*.test.ts) share: before each test
 * a fresh database, its webhooks repository, a verifying receiver, an event bus and a clock the
 * test moves by hand; after it, every dispatcher made stopped and all of it closed.
 */
import { afterEach, beforeEach, expect } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { createWebhooksRepository, type WebhooksRepository } from '../../src/db/webhooks-repository.js';
import { createEventBus, type EventBus, type WeirEvent } from '../../src/events/event-bus.js';
import { createAddressPolicy } from '../../src/webhooks/address-policy.js';
import { createDispatcher, type Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createSender } from '../../src/webhooks/sender.js';
import type { DatabaseTarget } from './databases.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const loopback = createAddressPolicy(['127.0.0.0/8']);

export function executionEvent(type: WeirEvent['type'] = 'execution.started', configId = 'c1'): WeirEvent {
  return {
    type: type as 'execution.started',
    execution_id: 'e1',
    config_id: configId,
    status: 'running',
    timestamp: new Date().toISOString(),
  };
}

export interface DispatcherOptions {
  timeoutMs?: number;
  concurrency?: number;
  withEvents?: boolean;
  repository?: WebhooksRepository;
  onError?: (error: unknown, message: string) => void;
}

/** Registers the hooks of one describe block; its fields are set before each of its tests. */
export class DispatcherHarness {
  database!: Database;
  repository!: WebhooksRepository;
  receiver!: WebhookReceiver;
  events!: EventBus;
  /** The dispatchers' `now()`: tests move it forward to pass schedules and leases. */
  clock!: Date;
  /** Stopped after each test. */
  readonly dispatchers: Dispatcher[] = [];

  constructor(target: DatabaseTarget) {
    beforeEach(async () => {
      this.database = await target.open();
      this.repository = createWebhooksRepository(this.database.db);
      this.receiver = await startWebhookReceiver();
      this.events = createEventBus((error) => {
        throw error;
      });
      this.clock = new Date('2030-01-01T00:00:00Z');
    });
    afterEach(async () => {
      for (const created of this.dispatchers.splice(0)) await created.stop();
      await this.receiver.close();
      await this.database.close();
    });
  }

  /** A dispatcher on the harness's repository, events and clock; errors it reports are thrown. */
  dispatcher(options: DispatcherOptions = {}): Dispatcher {
    const created = createDispatcher({
      repository: options.repository ?? this.repository,
      sender: createSender({ policy: loopback, timeoutMs: options.timeoutMs ?? 2000, maxSockets: 16 }),
      events: options.withEvents === false ? undefined : this.events,
      now: () => this.clock,
      timeoutMs: options.timeoutMs ?? 2000,
      ...(options.concurrency ? { concurrency: options.concurrency } : {}),
      onError:
        options.onError ??
        ((error) => {
          throw error;
        }),
    });
    this.dispatchers.push(created);
    return created;
  }

  /** A subscription that delivers to the receiver. */
  async subscribe(
    eventTypes: string[] = ['execution.started'],
    filters: Record<string, string> = {},
    enabled = true,
  ) {
    return this.repository.createSubscription({
      webhook_id: crypto.randomUUID(),
      url: this.receiver.url,
      secret: this.receiver.secret,
      event_types: eventTypes,
      filters,
      enabled,
      now: this.clock,
    });
  }

  async onlyDelivery(webhookId: string) {
    const { rows } = await this.repository.listDeliveries(webhookId, { limit: 10, offset: 0 });
    expect(rows).toHaveLength(1);
    return rows[0] as NonNullable<(typeof rows)[0]>;
  }
}
