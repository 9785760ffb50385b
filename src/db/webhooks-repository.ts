/**
 * Webhook subscriptions and deliveries (tables webhook_subscriptions, webhook_deliveries and
 * webhook_delivery_journal). Deliveries are an outbox, written one of two ways:
 * - journalled, by the statements of webhook-journal.ts (part of this repository): a batch of
 *   events is one journal row leased to the dispatcher that sends them, and each delivery
 *   becomes a row once, in its state after the first attempt;
 * - as pending rows (`recordEvents`), when no dispatcher here has room to send them soon.
 * `claimDue` leases due rows with FOR UPDATE SKIP LOCKED (so two dispatchers never take the
 * same row), `recordOutcomes` writes attempt results back only while the lease holds.
 * Every time comes from the caller, so a test clock drives the whole schedule.
 */
import { type Kysely, type Selectable, sql } from 'kysely';
import { int4Array, textArray, timestamptzArray, uuidArray } from './array-parameter.js';
import type {
  DatabaseSchema,
  WebhookDeliveryStatus,
  WebhookDeliveryTable,
  WebhookSubscriptionTable,
} from './schema.js';
import { analyzeDeliveriesAsTheyGrow, createWebhookJournal } from './webhook-journal.js';
import { createWebhookOutbox } from './webhook-outbox.js';

export type {
  FirstResult,
  JournalBatch,
  SnapshotSubscription,
  SubscriptionSnapshot,
} from './webhook-journal.js';
export type SubscriptionRow = Selectable<WebhookSubscriptionTable>;
export type DeliveryRow = Selectable<WebhookDeliveryTable>;

/** A claimed delivery with what sending it needs. */
export interface ClaimedDelivery extends DeliveryRow {
  url: string;
  secret: string;
}

export interface EventToRecord {
  event_id: string;
  event_type: string;
  /** The JSON sent, as text or as its UTF-8 bytes. */
  body: string | Uint8Array;
  created_at: Date;
  config_id?: string | undefined;
  execution_id?: string | undefined;
  route_id?: string | undefined;
  adapter_name?: string | undefined;
  /** Set for an event with an outbox row (webhook-outbox.ts): recorded only by the statement that deletes that row. */
  outbox_subject?: string | undefined;
}

export interface AttemptRecord {
  delivery_id: string;
  claim_token: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  next_attempt_at: Date | null;
  response_status: number | null;
  response_snippet: string | null;
  error: string | null;
  attempted_at: Date;
}

/**
 * Webhook subscriptions: each change bumps the subscription version in its transaction, so
 * dispatchers matching with the old set see it.
 */
function createSubscriptionStore(db: Kysely<DatabaseSchema>) {
  return {
    async createSubscription(row: {
      webhook_id: string;
      url: string;
      secret: string;
      event_types: string[];
      filters: Record<string, string>;
      enabled: boolean;
      now: Date;
    }): Promise<SubscriptionRow> {
      return db.transaction().execute(async (transaction) => {
        await bumpVersion(transaction);
        return transaction
          .insertInto('webhook_subscriptions')
          .values({
            webhook_id: row.webhook_id,
            url: row.url,
            secret: row.secret,
            event_types: JSON.stringify(row.event_types),
            filters: JSON.stringify(row.filters),
            enabled: row.enabled,
            created_at: row.now,
            updated_at: row.now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
      });
    },

    async listSubscriptions(page: { limit: number; offset: number }) {
      const [rows, count] = await Promise.all([
        db
          .selectFrom('webhook_subscriptions')
          .selectAll()
          .orderBy('created_at')
          .orderBy('webhook_id')
          .limit(page.limit)
          .offset(page.offset)
          .execute(),
        db
          .selectFrom('webhook_subscriptions')
          .select((eb) => eb.fn.countAll<string | number>().as('total'))
          .executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(count.total) };
    },

    async findSubscription(webhookId: string): Promise<SubscriptionRow | undefined> {
      return db
        .selectFrom('webhook_subscriptions')
        .selectAll()
        .where('webhook_id', '=', webhookId)
        .executeTakeFirst();
    },

    async updateSubscription(
      webhookId: string,
      changes: {
        url?: string | undefined;
        secret?: string | undefined;
        event_types?: string[] | undefined;
        filters?: Record<string, string> | undefined;
      },
      now: Date,
    ): Promise<SubscriptionRow | undefined> {
      return db.transaction().execute(async (transaction) => {
        await bumpVersion(transaction);
        return transaction
          .updateTable('webhook_subscriptions')
          .set({
            ...(changes.url !== undefined ? { url: changes.url } : {}),
            ...(changes.secret !== undefined ? { secret: changes.secret } : {}),
            ...(changes.event_types !== undefined
              ? { event_types: JSON.stringify(changes.event_types) }
              : {}),
            ...(changes.filters !== undefined ? { filters: JSON.stringify(changes.filters) } : {}),
            updated_at: now,
          })
          .where('webhook_id', '=', webhookId)
          .returningAll()
          .executeTakeFirst();
      });
    },

    /**
     * Enables or disables a subscription. Disabling parks its unsent deliveries (no due time,
     * so the dispatcher's scan never meets them); enabling makes them due at once.
     */
    async setEnabled(webhookId: string, enabled: boolean, now: Date): Promise<SubscriptionRow | undefined> {
      return db.transaction().execute(async (transaction) => {
        await bumpVersion(transaction);
        const row = await transaction
          .updateTable('webhook_subscriptions')
          .set({ enabled, updated_at: now })
          .where('webhook_id', '=', webhookId)
          .returningAll()
          .executeTakeFirst();
        if (!row) return undefined;
        let parked = transaction
          .updateTable('webhook_deliveries')
          .set({ next_attempt_at: enabled ? now : null })
          .where('webhook_id', '=', webhookId)
          .where('status', 'in', ['pending', 'pending_retry']);
        if (enabled) parked = parked.where('next_attempt_at', 'is', null);
        await parked.execute();
        return row;
      });
    },

    /**
     * Deletes the subscription, then its delivery history, in one transaction. In that order:
     * the version bump waits for journal and result writes matched with the subscription, the
     * first delete for deliveries being recorded as rows for it (they lock the subscription),
     * and the second then sees and deletes what they wrote. Journal rows are left: their
     * deliveries of it never get rows.
     */
    async deleteSubscription(webhookId: string): Promise<boolean> {
      return db.transaction().execute(async (transaction) => {
        await bumpVersion(transaction);
        const result = await transaction
          .deleteFrom('webhook_subscriptions')
          .where('webhook_id', '=', webhookId)
          .executeTakeFirst();
        await transaction.deleteFrom('webhook_deliveries').where('webhook_id', '=', webhookId).execute();
        return Number(result.numDeletedRows) > 0;
      });
    },
  };
}

/**
 * Deliveries as a work queue: events recorded as pending deliveries, due ones claimed under a
 * lease, attempt outcomes written back.
 */
function createDeliveryQueue(db: Kysely<DatabaseSchema>, deliveriesWritten: (count: number) => void) {
  return {
    /**
     * One pending delivery per (event, enabled subscription listing its type whose filters all
     * match), due at once; one statement for the whole batch. Returns how many rows were written.
     */
    async recordEvents(events: readonly EventToRecord[], options: { sweep?: boolean } = {}): Promise<number> {
      if (events.length === 0) return 0;
      // An event with an outbox row is recorded only by the statement that takes the row
      // (webhook-outbox.ts): a sweep marks it recorded, a dispatcher that heard the event
      // deletes it unless a sweep marked it. One without a row (none was needed) is recorded
      // when heard.
      const take = options.sweep
        ? sql`update webhook_event_outbox o set recorded = true from outbox_keys k
              where o.event_type = k.event_type and o.subject_id = k.subject_id and not o.recorded
              returning o.event_type, o.subject_id`
        : sql`delete from webhook_event_outbox o using outbox_keys k
              where o.event_type = k.event_type and o.subject_id = k.subject_id and not o.recorded
              returning o.event_type, o.subject_id`;
      const result = await sql<{ written: string | number }>`
        with ${matchedDeliveries(events)}, outbox_keys as (
          select distinct event_type, outbox_subject as subject_id from events where outbox_subject <> ''
        ), taken as (
          ${take}
        ), inserted as (
          insert into webhook_deliveries
            (delivery_id, webhook_id, event_id, event_type, body, status, next_attempt_at, created_at)
          select gen_random_uuid(), m.webhook_id, e.event_id, e.event_type, e.body, 'pending', e.created_at, e.created_at
          from events e ${joinMatches}
          where e.outbox_subject = ''
             or exists (select 1 from taken t
                        where t.event_type = e.event_type and t.subject_id = e.outbox_subject)
             or ${
               options.sweep
                 ? sql`false`
                 : sql`not exists (
                  select 1 from webhook_event_outbox o
                  where o.event_type = e.event_type and o.subject_id = e.outbox_subject)`
             }
          on conflict do nothing
          returning 1
        )
        select count(*) as written from inserted`.execute(db);
      const written = Number(result.rows[0]?.written ?? 0);
      deliveriesWritten(written);
      return written;
    },

    /**
     * Leases up to `limit` due deliveries until `leaseUntil` (parked deliveries of disabled
     * subscriptions have no due time). Rows another dispatcher is claiming are skipped (SKIP
     * LOCKED). The lease only sets claim columns, which no index covers, so taking it is a HOT
     * update (no index entries written); the due scan steps over the leased rows at the front
     * of the index (at most the dispatchers' in-flight count), and a row whose dispatcher died
     * mid-send comes due again when its lease runs out.
     */
    async claimDue(options: {
      now: Date;
      limit: number;
      token: string;
      leaseUntil: Date;
    }): Promise<ClaimedDelivery[]> {
      const now = options.now.toISOString();
      const result = await sql<ClaimedDelivery>`
        with due as (
          -- No join here: the index on next_attempt_at then gives the rows in order and the
          -- scan stops after \`limit\` (with a join the planner sorted every due row).
          select d.delivery_id
          from webhook_deliveries d
          where d.status in ('pending', 'pending_retry')
            and d.next_attempt_at <= ${now}::timestamptz
            and (d.claimed_until is null or d.claimed_until <= ${now}::timestamptz)
          order by d.next_attempt_at
          limit ${options.limit}
          for update skip locked
        ), claimed as (
          update webhook_deliveries d
          set claimed_until = ${options.leaseUntil.toISOString()}::timestamptz,
              claim_token = ${options.token}
          from due where d.delivery_id = due.delivery_id
          returning d.*
        )
        select claimed.*, s.url, s.secret
        from claimed join webhook_subscriptions s on s.webhook_id = claimed.webhook_id`.execute(db);
      return result.rows;
    },

    /**
     * Writes attempt results; a result whose lease was lost (re-armed meanwhile) is dropped.
     * One array per column (unnest), so the statement text and its plan do not grow with the
     * batch. The ids again as `= any(...)` keep the primary key in use at any batch size: on the
     * unnest alone 2,000 results scanned 100,000 deliveries (PGlite: 71 against 31 ms). Delivered results, the common case, take a narrower statement: no retry to park,
     * so no look at the subscription.
     */
    async recordOutcomes(records: readonly AttemptRecord[]): Promise<void> {
      if (records.length === 0) return;
      const delivered = records.filter((record) => record.status === 'delivered');
      const others =
        delivered.length === records.length ? [] : records.filter((record) => record.status !== 'delivered');
      if (delivered.length > 0) {
        const column = <T>(pick: (record: AttemptRecord) => T) => delivered.map(pick);
        const ids = uuidArray(column((record) => record.delivery_id));
        await sql`
          update webhook_deliveries d
          set status = 'delivered', attempts = v.attempts, next_attempt_at = null,
              response_status = v.response_status, response_snippet = v.response_snippet, error = null,
              last_attempt_at = v.attempted_at, delivered_at = v.attempted_at,
              claimed_until = null, claim_token = null
          from unnest(
                 ${ids}::uuid[],
                 ${textArray(column((record) => record.claim_token))}::text[],
                 ${int4Array(column((record) => record.attempts))}::integer[],
                 ${int4Array(column((record) => record.response_status))}::integer[],
                 ${textArray(column((record) => record.response_snippet))}::text[],
                 ${timestamptzArray(column((record) => record.attempted_at))}::timestamptz[]
               ) as v (delivery_id, claim_token, attempts, response_status, response_snippet, attempted_at)
          where d.delivery_id = v.delivery_id and d.claim_token = v.claim_token
            and d.delivery_id = any(${ids}::uuid[])`.execute(db);
      }
      if (others.length === 0) return;
      const column = <T>(pick: (record: AttemptRecord) => T) => others.map(pick);
      const ids = uuidArray(column((record) => record.delivery_id));
      await sql`
        update webhook_deliveries d
        set status = v.status, attempts = v.attempts,
            -- A subscription disabled during the attempt keeps the retry parked.
            next_attempt_at = case when s.enabled then v.next_attempt_at else null end,
            response_status = v.response_status, response_snippet = v.response_snippet, error = v.error,
            last_attempt_at = v.attempted_at,
            claimed_until = null, claim_token = null
        from unnest(
               ${ids}::uuid[],
               ${textArray(column((record) => record.claim_token))}::text[],
               ${textArray(column((record) => record.status))}::text[],
               ${int4Array(column((record) => record.attempts))}::integer[],
               ${timestamptzArray(column((record) => record.next_attempt_at))}::timestamptz[],
               ${int4Array(column((record) => record.response_status))}::integer[],
               ${textArray(column((record) => record.response_snippet))}::text[],
               ${textArray(column((record) => record.error))}::text[],
               ${timestamptzArray(column((record) => record.attempted_at))}::timestamptz[]
             ) as v (delivery_id, claim_token, status, attempts, next_attempt_at,
                     response_status, response_snippet, error, attempted_at),
             webhook_subscriptions s
        where d.delivery_id = v.delivery_id and d.claim_token = v.claim_token
          and d.delivery_id = any(${ids}::uuid[])
          and s.webhook_id = d.webhook_id`.execute(db);
    },
  };
}

/** Deliveries as the API shows them (journalled ones included), and the manual retry. */
function createDeliveryHistory(db: Kysely<DatabaseSchema>) {
  return {
    async listDeliveries(
      webhookId: string,
      filter: { status?: WebhookDeliveryStatus | undefined; limit: number; offset: number },
    ) {
      // The page and the total from one snapshot (deliveries change state while they are
      // listed). Deliveries still only in the journal show as pending (the view).
      return db
        .transaction()
        .setIsolationLevel('repeatable read')
        .execute(async (transaction) => {
          let query = transaction.selectFrom('webhook_delivery_records').where('webhook_id', '=', webhookId);
          if (filter.status) query = query.where('status', '=', filter.status);
          const rows = await query
            .selectAll()
            .orderBy('created_at', 'desc')
            .orderBy('delivery_id', 'desc')
            .limit(filter.limit)
            .offset(filter.offset)
            .execute();
          const count = await query
            .select((eb) => eb.fn.countAll<string | number>().as('total'))
            .executeTakeFirstOrThrow();
          return { rows, total: Number(count.total) };
        });
    },

    async findDelivery(deliveryId: string): Promise<DeliveryRow | undefined> {
      return db
        .selectFrom('webhook_delivery_records')
        .selectAll()
        .where('delivery_id', '=', deliveryId)
        .executeTakeFirst();
    },

    /**
     * Manual retry: the delivery is due now with a fresh cycle of attempts, whatever its state;
     * an attempt in flight loses its lease, so its result is not written over this.
     */
    async rearm(webhookId: string, deliveryId: string, now: Date): Promise<DeliveryRow | undefined> {
      return db.transaction().execute(async (transaction) => {
        // A delivery still only in the journal gets its row first (its dispatcher's own write
        // of it will then find the row and leave it).
        await sql`
          insert into webhook_deliveries
            (delivery_id, webhook_id, event_id, event_type, body, status, next_attempt_at, created_at)
          select delivery_id, webhook_id, event_id, event_type, body, 'pending', next_attempt_at, created_at
          from webhook_delivery_records
          where delivery_id = ${deliveryId}::uuid and webhook_id = ${webhookId}::uuid
          on conflict do nothing`.execute(transaction);
        return rearmRow(transaction, webhookId, deliveryId, now);
      });
    },
  };
}

export function createWebhooksRepository(db: Kysely<DatabaseSchema>) {
  const deliveriesWritten = analyzeDeliveriesAsTheyGrow(db);
  return {
    ...createSubscriptionStore(db),
    ...createDeliveryQueue(db, deliveriesWritten),
    ...createWebhookJournal(db, deliveriesWritten),
    ...createWebhookOutbox(db),
    ...createDeliveryHistory(db),
  };
}

/**
 * Counts a change to the subscriptions, first in its transaction: the row lock makes journal
 * and result writes matched with the old version wait for the change or fail (see
 * journalDeliveries).
 */
async function bumpVersion(db: Kysely<DatabaseSchema>): Promise<void> {
  await sql`update webhook_subscription_version set version = version + 1`.execute(db);
}

/**
 * The CTEs `subscriptions` (enabled ones), `events` (the batch, `event_index` from 0) and
 * `matches` for recording a batch of events. One array per column (unnest): the statement and
 * its plan stay the same size whatever the batch (a VALUES list cost three times as much per
 * row). Subscriptions are matched once per distinct (type, filter values) of the batch, not once
 * per event: the JSON tests per event and subscription cost more than the insert itself. Filter
 * values join as '' for absent, so the join can hash.
 */
function matchedDeliveries(events: readonly EventToRecord[]) {
  const column = <T>(pick: (event: EventToRecord) => T) => events.map(pick);
  return sql`subscriptions as (
      -- In place of a foreign key: a subscription being deleted waits for this statement, and
      -- then deletes what it wrote (deleteSubscription).
      select * from webhook_subscriptions where enabled for key share
    ), events as (
      select event_id, event_type, body, created_at, config_id, execution_id, route_id, adapter_name,
             outbox_subject, (n - 1)::integer as event_index
      from unnest(
             ${textArray(column((event) => event.event_id))}::text[],
             ${textArray(column((event) => event.event_type))}::text[],
             ${textArray(column((event) => event.body))}::text[],
             ${timestamptzArray(column((event) => event.created_at))}::timestamptz[],
             ${textArray(column((event) => event.config_id ?? ''))}::text[],
             ${textArray(column((event) => event.execution_id ?? ''))}::text[],
             ${textArray(column((event) => event.route_id ?? ''))}::text[],
             ${textArray(column((event) => event.adapter_name ?? ''))}::text[],
             ${textArray(column((event) => event.outbox_subject ?? ''))}::text[]
           ) with ordinality
           as e (event_id, event_type, body, created_at, config_id, execution_id, route_id, adapter_name,
                 outbox_subject, n)
    ), matches as (
      select k.*, s.webhook_id
      from (select distinct event_type, config_id, execution_id, route_id, adapter_name from events) k
      join subscriptions s
        on s.event_types @> jsonb_build_array(k.event_type)
       and coalesce(s.filters ->> 'config_id', k.config_id) = k.config_id
       and coalesce(s.filters ->> 'execution_id', k.execution_id) = k.execution_id
       and coalesce(s.filters ->> 'route_id', k.route_id) = k.route_id
       and coalesce(s.filters ->> 'adapter_name', k.adapter_name) = k.adapter_name
    )`;
}

/** Joins `events e` to their matching subscriptions (`matches m`). */
const joinMatches = sql`join matches m
  on m.event_type = e.event_type and m.config_id = e.config_id and m.execution_id = e.execution_id
 and m.route_id = e.route_id and m.adapter_name = e.adapter_name`;

/** Manual retry of a delivery that has its row. */
function rearmRow(db: Kysely<DatabaseSchema>, webhookId: string, deliveryId: string, now: Date) {
  return db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      status: 'pending',
      attempts: 0,
      manual_retries: eb('manual_retries', '+', 1),
      // Due now, or parked while the subscription is disabled.
      next_attempt_at: sql<Date | null>`case when exists (
            select 1 from webhook_subscriptions s where s.webhook_id = ${webhookId} and s.enabled
          ) then ${now.toISOString()}::timestamptz else null end`,
      claimed_until: null,
      claim_token: null,
    }))
    .where('webhook_id', '=', webhookId)
    .where('delivery_id', '=', deliveryId)
    .returningAll()
    .executeTakeFirst();
}

export type WebhooksRepository = ReturnType<typeof createWebhooksRepository>;
