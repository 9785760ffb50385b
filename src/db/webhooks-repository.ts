/**
 * Webhook subscriptions and deliveries (tables webhook_subscriptions, webhook_deliveries and
 * webhook_delivery_journal). Deliveries are an outbox, written one of two ways:
 * - journalled: `journalEvents` writes a batch of events as one journal row leased to the
 *   dispatcher that sends them; `writeFirstResults` then writes each delivery as a row once, in
 *   its state after the first attempt, and drops journal rows whose deliveries all have rows;
 *   `expandExpiredJournals` turns journal rows whose lease ran out into pending rows;
 * - as pending rows (`recordEvents`), when no dispatcher here has room to send them soon.
 * `claimDue` leases due rows with FOR UPDATE SKIP LOCKED (so two dispatchers never take the
 * same row), `recordOutcomes` writes attempt results back only while the lease holds.
 * Every time comes from the caller, so a test clock drives the whole schedule.
 */

import { type Kysely, type Selectable, sql } from 'kysely';
import { int4Array, textArray, timestamptzArray, uuidArray } from './array-parameter.js';
import { createAutoAnalyze } from './auto-analyze.js';
import type {
  DatabaseSchema,
  WebhookDeliveryStatus,
  WebhookDeliveryTable,
  WebhookSubscriptionTable,
} from './schema.js';

export type SubscriptionRow = Selectable<WebhookSubscriptionTable>;
export type DeliveryRow = Selectable<WebhookDeliveryTable>;

/** A claimed delivery with what sending it needs. */
export interface ClaimedDelivery extends DeliveryRow {
  url: string;
  secret: string;
}

/** A subscription as dispatchers match and send with it. */
export interface SnapshotSubscription {
  webhook_id: string;
  url: string;
  secret: string;
  event_types: string[];
  filters: Record<string, string>;
  enabled: boolean;
}

export interface SubscriptionSnapshot {
  version: number;
  subscriptions: SnapshotSubscription[];
}

/** A batch of deliveries for the journal; the arrays hold one element per delivery. */
export interface JournalBatch {
  batchId: string;
  token: string;
  until: Date;
  createdAt: Date;
  deliveryIds: string[];
  webhookIds: string[];
  eventIds: string[];
  eventTypes: string[];
  bodies: Array<string | Uint8Array>;
}

/** A journalled delivery as its row is first written: after its first attempt, or unsent. */
export interface FirstResult {
  delivery_id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  body: string | Uint8Array;
  created_at: Date;
  status: WebhookDeliveryStatus;
  attempts: number;
  /** Null for a pending delivery parked because its subscription is disabled. */
  next_attempt_at: Date | null;
  response_status: number | null;
  response_snippet: string | null;
  error: string | null;
  /** Null when it was not attempted. */
  attempted_at: Date | null;
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

export function createWebhooksRepository(db: Kysely<DatabaseSchema>) {
  const deliveriesWritten = createAutoAnalyze(db as Kysely<unknown>, 'webhook_deliveries');
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

    /**
     * One pending delivery per (event, enabled subscription listing its type whose filters all
     * match), due at once; one statement for the whole batch. Returns how many rows were written.
     */
    async recordEvents(events: readonly EventToRecord[]): Promise<number> {
      if (events.length === 0) return 0;
      const result = await sql<{ written: string | number }>`
        with ${matchedDeliveries(events)}, inserted as (
          insert into webhook_deliveries
            (delivery_id, webhook_id, event_id, event_type, body, status, next_attempt_at, created_at)
          select gen_random_uuid(), m.webhook_id, e.event_id, e.event_type, e.body, 'pending', e.created_at, e.created_at
          from events e ${joinMatches}
          returning 1
        )
        select count(*) as written from inserted`.execute(db);
      const written = Number(result.rows[0]?.written ?? 0);
      deliveriesWritten(written);
      return written;
    },

    /**
     * The subscriptions and their version, read together: what a dispatcher matches events
     * with. A write made with them (journalDeliveries, writeFirstResults) commits only while
     * the version is still current.
     */
    async subscriptionSnapshot(): Promise<SubscriptionSnapshot> {
      const result = await sql<{
        version: string;
        webhook_id: string | null;
        url: string;
        secret: string;
        event_types: string[];
        filters: Record<string, string>;
        enabled: boolean;
      }>`
        select v.version, s.webhook_id, s.url, s.secret, s.event_types, s.filters, s.enabled
        from webhook_subscription_version v left join webhook_subscriptions s on true`.execute(db);
      const subscriptions: SnapshotSubscription[] = [];
      for (const row of result.rows) {
        if (row.webhook_id === null) continue;
        subscriptions.push({
          webhook_id: row.webhook_id,
          url: row.url,
          secret: row.secret,
          event_types: row.event_types,
          filters: row.filters,
          enabled: row.enabled,
        });
      }
      return { version: Number(result.rows[0]?.version ?? 0), subscriptions };
    },

    /**
     * Journals a batch of deliveries matched in memory with subscriptions at `version`: one
     * journal row, leased to the caller until `batch.until`, which sends them. Written only if
     * `version` is still current (the version row is share-locked, so a subscription change
     * waits for this write or this write sees the change); returns false when it was not, and
     * the caller matches again. With no deliveries, only the version is checked.
     */
    async journalDeliveries(batch: JournalBatch, version: number): Promise<boolean> {
      const result = await sql<{ current: string }>`
        with current_version as (
          select version from webhook_subscription_version for share
        ), journal as (
          insert into webhook_delivery_journal
            (batch_id, claim_token, claimed_until, created_at, delivery_ids, webhook_ids, event_ids, event_types, bodies)
          select ${batch.batchId}::uuid, ${batch.token}, ${batch.until.toISOString()}::timestamptz,
                 ${batch.createdAt.toISOString()}::timestamptz,
                 ${uuidArray(batch.deliveryIds)}::uuid[], ${uuidArray(batch.webhookIds)}::uuid[],
                 ${textArray(batch.eventIds)}::text[], ${textArray(batch.eventTypes)}::text[],
                 ${textArray(batch.bodies)}::text[]
          from current_version
          where current_version.version = ${version} and ${batch.deliveryIds.length} > 0
        )
        select version as current from current_version`.execute(db);
      return Number(result.rows[0]?.current) === version;
    },

    /**
     * Writes journalled deliveries as rows, each once (a delivery that has a row already,
     * because its journal ran out and was expanded or a manual retry wrote it, keeps that row),
     * and deletes the journal rows of `finishedBatches`, in one statement, and only if the
     * subscriptions are still at `version`: the caller has left out the deliveries of deleted
     * subscriptions and parked (no due time) the pending ones of disabled subscriptions as of
     * that version. Returns whether it was written.
     */
    async writeFirstResults(
      records: readonly FirstResult[],
      finishedBatches: readonly string[],
      version: number,
    ): Promise<boolean> {
      // Rows clash only after a journal ran out or a manual retry: the plain insert first (the
      // clash check cost a sixth of the statement), the one that skips clashing rows after a
      // clash.
      let current: number;
      try {
        current = await insertFirstResults(db, records, finishedBatches, version, false);
      } catch (error) {
        if ((error as { code?: unknown }).code !== UNIQUE_VIOLATION) throw error;
        current = await insertFirstResults(db, records, finishedBatches, version, true);
      }
      if (current !== version) return false;
      deliveriesWritten(records.length);
      return true;
    },

    /**
     * Turns journal rows whose lease ran out by `now` (their dispatcher died or gave up on them)
     * into pending rows, except for deliveries that have rows already; up to `limit` journal rows
     * per call, skipping rows another dispatcher is expanding. Returns how many journal rows.
     */
    async expandExpiredJournals(now: Date, limit = 100): Promise<number> {
      const result = await sql<{ batches: string | number }>`
        with expired as (
          delete from webhook_delivery_journal j
          where j.batch_id in (
            select batch_id from webhook_delivery_journal
            where claimed_until <= ${now.toISOString()}::timestamptz
            order by claimed_until
            limit ${limit}
            for update skip locked
          )
          returning j.*
        ), entries as (
          select x.*, e.created_at
          from expired e
          cross join lateral unnest(e.delivery_ids, e.webhook_ids, e.event_ids, e.event_types, e.bodies)
            as x (delivery_id, webhook_id, event_id, event_type, body)
        ), subscriptions as (
          select webhook_id, enabled from webhook_subscriptions
          where webhook_id in (select webhook_id from entries) for key share
        ), inserted as (
          insert into webhook_deliveries
            (delivery_id, webhook_id, event_id, event_type, body, status, next_attempt_at, created_at)
          select x.delivery_id, x.webhook_id, x.event_id, x.event_type, x.body, 'pending',
                 case when s.enabled then x.created_at end, x.created_at
          from entries x join subscriptions s on s.webhook_id = x.webhook_id
          on conflict (delivery_id) do nothing
          returning 1
        )
        select (select count(*) from expired) as batches, (select count(*) from inserted) as written`.execute(
        db,
      );
      return Number(result.rows[0]?.batches ?? 0);
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
     * batch. Delivered results, the common case, take a narrower statement: no retry to park,
     * so no look at the subscription.
     */
    async recordOutcomes(records: readonly AttemptRecord[]): Promise<void> {
      if (records.length === 0) return;
      const delivered = records.filter((record) => record.status === 'delivered');
      const others =
        delivered.length === records.length ? [] : records.filter((record) => record.status !== 'delivered');
      if (delivered.length > 0) {
        const column = <T>(pick: (record: AttemptRecord) => T) => delivered.map(pick);
        await sql`
          update webhook_deliveries d
          set status = 'delivered', attempts = v.attempts, next_attempt_at = null,
              response_status = v.response_status, response_snippet = v.response_snippet, error = null,
              last_attempt_at = v.attempted_at, delivered_at = v.attempted_at,
              claimed_until = null, claim_token = null
          from unnest(
                 ${uuidArray(column((record) => record.delivery_id))}::uuid[],
                 ${textArray(column((record) => record.claim_token))}::text[],
                 ${int4Array(column((record) => record.attempts))}::integer[],
                 ${int4Array(column((record) => record.response_status))}::integer[],
                 ${textArray(column((record) => record.response_snippet))}::text[],
                 ${timestamptzArray(column((record) => record.attempted_at))}::timestamptz[]
               ) as v (delivery_id, claim_token, attempts, response_status, response_snippet, attempted_at)
          where d.delivery_id = v.delivery_id and d.claim_token = v.claim_token`.execute(db);
      }
      if (others.length === 0) return;
      const column = <T>(pick: (record: AttemptRecord) => T) => others.map(pick);
      await sql`
        update webhook_deliveries d
        set status = v.status, attempts = v.attempts,
            -- A subscription disabled during the attempt keeps the retry parked.
            next_attempt_at = case when s.enabled then v.next_attempt_at else null end,
            response_status = v.response_status, response_snippet = v.response_snippet, error = v.error,
            last_attempt_at = v.attempted_at,
            claimed_until = null, claim_token = null
        from unnest(
               ${uuidArray(column((record) => record.delivery_id))}::uuid[],
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
          and s.webhook_id = d.webhook_id`.execute(db);
    },

    async listDeliveries(
      webhookId: string,
      filter: { status?: WebhookDeliveryStatus | undefined; limit: number; offset: number },
    ) {
      // Deliveries still only in the journal show as pending (the view).
      let query = db.selectFrom('webhook_delivery_records').where('webhook_id', '=', webhookId);
      if (filter.status) query = query.where('status', '=', filter.status);
      const [rows, count] = await Promise.all([
        query
          .selectAll()
          .orderBy('created_at', 'desc')
          .orderBy('delivery_id', 'desc')
          .limit(filter.limit)
          .offset(filter.offset)
          .execute(),
        query.select((eb) => eb.fn.countAll<string | number>().as('total')).executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(count.total) };
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
          on conflict (delivery_id) do nothing`.execute(transaction);
        return rearmRow(transaction, webhookId, deliveryId, now);
      });
    },
  };
}

const UNIQUE_VIOLATION = '23505';

/**
 * The statement of writeFirstResults: the rows, only if the subscriptions are at `version`, and
 * the finished journal rows gone. Returns the current version.
 */
async function insertFirstResults(
  db: Kysely<DatabaseSchema>,
  records: readonly FirstResult[],
  finishedBatches: readonly string[],
  version: number,
  skipClashes: boolean,
): Promise<number> {
  const result = await sql<{ current: string }>`
    with current as (
      select version from webhook_subscription_version for share
    ), inserted as (
      insert into webhook_deliveries
        (delivery_id, webhook_id, event_id, event_type, body, status, attempts, next_attempt_at,
         response_status, response_snippet, error, created_at, last_attempt_at, delivered_at)
      ${allDelivered(records) ? deliveredRows(records) : resultRows(records)}
      where (select version from current) = ${version}
      ${skipClashes ? sql`on conflict (delivery_id) do nothing` : sql``}
    ), finished as (
      delete from webhook_delivery_journal
      where batch_id = any(${uuidArray(finishedBatches)}::uuid[]) and (select version from current) = ${version}
    )
    select version as current from current`.execute(db);
  return Number(result.rows[0]?.current);
}

/** True when every record is a delivery answered 2xx at its first attempt (the usual batch). */
function allDelivered(records: readonly FirstResult[]): boolean {
  for (const record of records) if (record.status !== 'delivered' || record.attempts !== 1) return false;
  return true;
}

/** The rows of a batch of deliveries answered at their first attempt: nine arrays, not thirteen. */
function deliveredRows(records: readonly FirstResult[]) {
  const column = <T>(pick: (record: FirstResult) => T) => records.map(pick);
  return sql`select v.delivery_id, v.webhook_id, v.event_id, v.event_type, v.body, 'delivered', 1,
           null::timestamptz, v.response_status, v.response_snippet, null::text, v.created_at,
           v.attempted_at, v.attempted_at
    from unnest(
           ${uuidArray(column((record) => record.delivery_id))}::uuid[],
           ${uuidArray(column((record) => record.webhook_id))}::uuid[],
           ${textArray(column((record) => record.event_id))}::text[],
           ${textArray(column((record) => record.event_type))}::text[],
           ${textArray(column((record) => record.body))}::text[],
           ${int4Array(column((record) => record.response_status))}::integer[],
           ${textArray(column((record) => record.response_snippet))}::text[],
           ${timestamptzArray(column((record) => record.created_at))}::timestamptz[],
           ${timestamptzArray(column((record) => record.attempted_at))}::timestamptz[]
         ) as v (delivery_id, webhook_id, event_id, event_type, body, response_status, response_snippet,
                 created_at, attempted_at)`;
}

/** The rows of any batch of first results. */
function resultRows(records: readonly FirstResult[]) {
  const column = <T>(pick: (record: FirstResult) => T) => records.map(pick);
  return sql`select v.delivery_id, v.webhook_id, v.event_id, v.event_type, v.body, v.status, v.attempts,
           v.next_attempt_at, v.response_status, v.response_snippet, v.error, v.created_at,
           v.attempted_at, case when v.status = 'delivered' then v.attempted_at end
    from unnest(
           ${uuidArray(column((record) => record.delivery_id))}::uuid[],
           ${uuidArray(column((record) => record.webhook_id))}::uuid[],
           ${textArray(column((record) => record.event_id))}::text[],
           ${textArray(column((record) => record.event_type))}::text[],
           ${textArray(column((record) => record.body))}::text[],
           ${textArray(column((record) => record.status))}::text[],
           ${int4Array(column((record) => record.attempts))}::integer[],
           ${timestamptzArray(column((record) => record.next_attempt_at))}::timestamptz[],
           ${int4Array(column((record) => record.response_status))}::integer[],
           ${textArray(column((record) => record.response_snippet))}::text[],
           ${textArray(column((record) => record.error))}::text[],
           ${timestamptzArray(column((record) => record.created_at))}::timestamptz[],
           ${timestamptzArray(column((record) => record.attempted_at))}::timestamptz[]
         ) as v (delivery_id, webhook_id, event_id, event_type, body, status, attempts, next_attempt_at,
                 response_status, response_snippet, error, created_at, attempted_at)`;
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
             (n - 1)::integer as event_index
      from unnest(
             ${textArray(column((event) => event.event_id))}::text[],
             ${textArray(column((event) => event.event_type))}::text[],
             ${textArray(column((event) => event.body))}::text[],
             ${timestamptzArray(column((event) => event.created_at))}::timestamptz[],
             ${textArray(column((event) => event.config_id ?? ''))}::text[],
             ${textArray(column((event) => event.execution_id ?? ''))}::text[],
             ${textArray(column((event) => event.route_id ?? ''))}::text[],
             ${textArray(column((event) => event.adapter_name ?? ''))}::text[]
           ) with ordinality
           as e (event_id, event_type, body, created_at, config_id, execution_id, route_id, adapter_name, n)
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
