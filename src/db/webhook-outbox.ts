/**
 * The webhook event outbox (migration 0012): events of committed state changes that no
 * dispatcher has recorded yet. Execution events are written by triggers, lineage.failed by the
 * finish statements through `outboxFailures`. An event is recorded once:
 * - the dispatcher that hears it on its bus records it with the statement that deletes its
 *   row (recordEvents, journalDeliveries), unless a sweep has marked the row recorded; an
 *   event without a row (none was needed) is recorded as well;
 * - a sweep (`leftBehind`, then recordEvents with `sweep`) records rows left behind by an
 *   instance that died, and marks them recorded instead of deleting them; `purgeRecorded`
 *   drops the marks once no dispatcher can still be recording their events.
 */
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { WeirEvent } from '../events/event-bus.js';
import type { DatabaseSchema } from './schema.js';

/** An outbox row: which event, about which execution or message. */
export interface OutboxKey {
  event_type: string;
  subject_id: string;
}

/** The outbox key of an event that has an outbox row; undefined for events that do not. */
export function outboxKeyOf(event: WeirEvent): OutboxKey | undefined {
  if (event.type === 'lineage.failed') return { event_type: event.type, subject_id: event.message_id };
  if (event.type === 'storage.object_created') return undefined;
  return { event_type: event.type, subject_id: event.execution_id };
}

/**
 * The insert of lineage.failed rows for `failures` (a query of message_id uuid, failed_event
 * text holding the event's JSON or null, finished_at), while some subscription exists.
 */
export function outboxFailures(failures: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`insert into webhook_event_outbox (event_type, subject_id, event, created_at)
    select 'lineage.failed', f.message_id::text, f.failed_event::jsonb, f.finished_at
    from (${failures}) f
    where f.failed_event is not null and exists (select 1 from webhook_subscriptions)
    on conflict do nothing`;
}

export function createWebhookOutbox(db: Kysely<DatabaseSchema>) {
  return {
    /**
     * Up to `limit` events written before `before` and not recorded, oldest first: rows whose
     * dispatcher has not recorded them long after the commit (it died, or never heard them).
     */
    async leftBehind(before: Date, limit: number): Promise<WeirEvent[]> {
      const rows = await db
        .selectFrom('webhook_event_outbox')
        .select('event')
        .where('recorded', '=', false)
        .where('created_at', '<', before)
        .orderBy('created_at')
        .limit(limit)
        .execute();
      return rows.map((row) => row.event as unknown as WeirEvent);
    },

    /** Drops the marks of rows a sweep recorded before `before`. */
    async purgeRecorded(before: Date): Promise<void> {
      await db
        .deleteFrom('webhook_event_outbox')
        .where('recorded', '=', true)
        .where('created_at', '<', before)
        .execute();
    },
  };
}
