/**
 * The dispatcher's recording half (see dispatcher.ts): events raised together become one
 * journal row leased to this dispatcher, matched with the subscriptions in memory, and wait in
 * `state.ready` for a slot; when more wait than it can send soon, they become pending rows for
 * whichever dispatcher claims them.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { outboxKeyText } from '../db/webhook-journal.js';
import { outboxKeyOf } from '../db/webhook-outbox.js';
import type { SubscriptionSnapshot, WebhooksRepository } from '../db/webhooks-repository.js';
import type { WeirEvent } from '../events/event-bus.js';
import { createGroupWriter, type GroupWriter } from '../runtime/batcher.js';
import type { DispatchState, JournalLease, Journalled, RecordedEvent } from './dispatch-state.js';
import { eventBody, filterValues } from './event-body.js';
import { lostBatch } from './result-writing.js';
import { createMatcher } from './subscription-matching.js';
import type { SubscriptionView } from './subscription-view.js';

/** Writes of a batch of events before its deliveries are given up, and the first wait between. */
const RECORD_ATTEMPTS = 5;
const RECORD_RETRY_MS = 100;

export interface EventRecorderOptions {
  repository: WebhooksRepository;
  state: DispatchState;
  subscriptions: SubscriptionView;
  now: () => Date;
  newId: () => string;
  /** How long a journal row is leased to this dispatcher (ms). */
  leaseLength: number;
  /** Journalled deliveries that may wait in `state.ready`. */
  readyLimit: number;
  /** Called with each journalled batch once it waits in `state.ready` (to sign it ahead). */
  journalled: (items: Journalled[]) => void;
  /** Called once a batch is recorded (deliveries are waiting). */
  recorded: () => void;
  onError: (error: unknown, message: string) => void;
}

/**
 * Events become journal rows (or pending rows) in group-committed batches (no promise per
 * event). A batch the database refuses is tried again a few times (a restarting database, a
 * lost connection) before its deliveries are given up and reported. Delivery ids stay the same
 * across attempts, so should a write that seemed to fail have landed after all, its journal
 * row's deliveries become rows only once (the ids clash) when it runs out.
 */
export function createEventRecorder(options: EventRecorderOptions): GroupWriter<WeirEvent> {
  const { state, onError } = options;
  const record = journalEvents(options);
  return createGroupWriter<WeirEvent>(
    async (events) => {
      const rows = eventRows(events, options.now(), options.newId);
      const deliveryIds = new Map<string, string>();
      for (let attempt = 1; ; attempt++) {
        try {
          await record(rows, deliveryIds);
          options.recorded();
          return;
        } catch (error) {
          if (attempt >= RECORD_ATTEMPTS || state.stopped) {
            onError(error, `webhook deliveries for ${events.length} events could not be recorded`);
            return;
          }
          await sleep(RECORD_RETRY_MS * 2 ** (attempt - 1));
        }
      }
    },
    undefined,
    { onError: lostBatch(onError, 'recorded events') },
  );
}

/** The rows recording `events` at `at`, each with a new event id and its body encoded once. */
export function eventRows(events: WeirEvent[], at: Date, newId: () => string): RecordedEvent[] {
  const rows: RecordedEvent[] = new Array(events.length);
  for (let index = 0; index < events.length; index++) {
    const event = events[index] as WeirEvent;
    const filters = filterValues(event);
    const eventId = newId();
    rows[index] = {
      event_id: eventId,
      event_type: event.type,
      body: Buffer.from(JSON.stringify(eventBody(event, eventId)), 'utf8'),
      created_at: at,
      config_id: filters.config_id,
      execution_id: filters.execution_id,
      route_id: filters.route_id,
      adapter_name: filters.adapter_name,
      outbox_subject: outboxKeyOf(event)?.subject_id,
    };
  }
  return rows;
}

/**
 * Records one batch: journalled (and put in `state.ready`) as far as this dispatcher can send
 * soon, the rest as pending rows. `deliveryIds` keeps the ids across attempts.
 */
function journalEvents(options: EventRecorderOptions) {
  const { repository, state, subscriptions: subscriptionView, now } = options;
  return async function record(rows: RecordedEvent[], deliveryIds: Map<string, string>): Promise<void> {
    // Journalled only what this dispatcher can send soon; the rest waits as pending rows.
    const room = state.started && !state.stopped ? Math.max(0, options.readyLimit - state.ready.size) : 0;
    if (room < rows.length) {
      await repository.recordEvents(rows.slice(room));
      if (room === 0) return;
      rows = rows.slice(0, room);
    }
    for (;;) {
      const subscriptions = await subscriptionView.current();
      const lease: JournalLease = {
        batchId: randomUUID(),
        until: now().getTime() + options.leaseLength,
        size: 0,
        handedOver: 0,
        broken: false,
      };
      const items = matchDeliveries(rows, subscriptions, lease, deliveryIds, options.newId);
      let write: Awaited<ReturnType<typeof repository.journalDeliveries>>;
      try {
        write = await repository.journalDeliveries(
          {
            batchId: lease.batchId,
            token: lease.batchId,
            until: new Date(lease.until),
            createdAt: rows[0]?.created_at ?? now(),
            deliveryIds: items.map((item) => item.delivery_id),
            webhookIds: items.map((item) => item.webhook_id),
            eventIds: items.map((item) => item.event_id),
            eventTypes: items.map((item) => item.event_type),
            bodies: items.map((item) => item.body),
            outbox: outboxKeys(rows, items),
          },
          subscriptions.version,
        );
      } catch (error) {
        // Written after all, perhaps: the next attempt gives them the same ids.
        rememberDeliveryIds(items, deliveryIds);
        throw error;
      }
      if (!write.written) rememberDeliveryIds(items, deliveryIds);
      if (!write.versionCurrent) {
        // The subscriptions changed since they were read: read them and match again.
        await subscriptionView.reload();
        continue;
      }
      if (!write.written) {
        // A sweep recorded some of them already (this instance took too long): the rest only.
        rows = rows.filter((row) => !row.outbox_subject || !write.recordedElsewhere.has(outboxText(row)));
        continue;
      }
      lease.size = items.length;
      for (const item of items) state.ready.push(item);
      options.journalled(items);
      return;
    }
  };
}

/**
 * The deliveries of `rows` to the subscriptions they match, in `lease`. A delivery keeps the
 * id it was given in an earlier attempt (`deliveryIds`, by event and subscription, filled by
 * rememberDeliveryIds only when an attempt did not go through: a key per delivery on every
 * batch was a string and a map entry per waiting delivery for nothing).
 */
export function matchDeliveries(
  rows: readonly RecordedEvent[],
  subscriptions: SubscriptionSnapshot,
  lease: JournalLease,
  deliveryIds: Map<string, string>,
  newId: () => string,
): Journalled[] {
  const match = createMatcher(subscriptions.subscriptions);
  const items: Journalled[] = [];
  const earlier = deliveryIds.size > 0;
  for (const row of rows) {
    for (const subscription of match(row)) {
      const deliveryId =
        (earlier && deliveryIds.get(pairKey(row.event_id, subscription.webhook_id))) || newId();
      items.push({
        lease,
        delivery_id: deliveryId,
        webhook_id: subscription.webhook_id,
        url: subscription.url,
        secret: subscription.secret,
        event_id: row.event_id,
        event_type: row.event_type,
        body: row.body,
        created_at: row.created_at,
        version: subscriptions.version,
      });
    }
  }
  return items;
}

/** Keeps the ids of `items` for the next attempt at recording them (see matchDeliveries). */
export function rememberDeliveryIds(items: readonly Journalled[], deliveryIds: Map<string, string>): void {
  for (const item of items) deliveryIds.set(pairKey(item.event_id, item.webhook_id), item.delivery_id);
}

const pairKey = (eventId: string, webhookId: string) => `${eventId}/${webhookId}`;

/** The outbox rows of `rows`, each needed when one of its deliveries is in the batch. */
function outboxKeys(rows: readonly RecordedEvent[], items: readonly Journalled[]) {
  const keys: Array<{ event_type: string; subject_id: string; needed: boolean }> = [];
  // Storage events have no outbox row: no set of the batch's event ids for them.
  if (!rows.some((row) => row.outbox_subject)) return keys;
  const withDeliveries = new Set(items.map((item) => item.event_id));
  for (const row of rows)
    if (row.outbox_subject)
      keys.push({
        event_type: row.event_type,
        subject_id: row.outbox_subject,
        needed: withDeliveries.has(row.event_id),
      });
  return keys;
}

function outboxText(row: RecordedEvent): string {
  return outboxKeyText({ event_type: row.event_type, subject_id: row.outbox_subject as string });
}
