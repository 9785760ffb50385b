/**
 * The journal of recorded webhook deliveries (migration 10; docs/webhooks.md): the statements
 * a dispatcher records and settles journalled deliveries with. A batch of events becomes one
 * journal row leased to its dispatcher (`journalDeliveries`), each delivery a row of
 * webhook_deliveries once, after its first attempt (`writeFirstResults`), and a journal row
 * whose lease ran out becomes pending rows (`expandExpiredJournals`). Events are matched to
 * subscriptions in memory (`subscriptionSnapshot`); both writes commit only while the
 * subscriptions' version they were matched with is current.
 */
import { type Kysely, sql } from 'kysely';
import { int4Array, textArray, timestamptzArray, uuidArray } from './array-parameter.js';
import { createAutoAnalyze } from './auto-analyze.js';
import type { DatabaseSchema, WebhookDeliveryStatus } from './schema.js';
import type { OutboxKey } from './webhook-outbox.js';

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
  /**
   * The outbox keys of the batch's events (webhook-outbox.ts), each `needed` when the batch
   * holds a delivery of its event. Their rows are deleted with the journal; the journal is not
   * written when a needed one was marked recorded by a sweep.
   */
  outbox?: ReadonlyArray<OutboxKey & { needed: boolean }>;
}

/** What a journal write found. */
export interface JournalWrite {
  /** False when the subscriptions changed since `version`: nothing was written. */
  versionCurrent: boolean;
  /** False when nothing was written (the version changed, or a needed event was recorded by a sweep). */
  written: boolean;
  /** The events a sweep recorded already, as `${event_type} ${subject_id}`: to be left out. */
  recordedElsewhere: Set<string>;
}

/** How an outbox key appears in JournalWrite.recordedElsewhere. */
export const outboxKeyText = (key: OutboxKey) => `${key.event_type} ${key.subject_id}`;

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

/**
 * What a dispatcher matches events with, and the journal row it writes for a matched batch
 * before sending it.
 */
function createSubscriptionJournal(db: Kysely<DatabaseSchema>) {
  return {
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
    async journalDeliveries(batch: JournalBatch, version: number): Promise<JournalWrite> {
      const outbox = batch.outbox ?? [];
      const result = await sql<{ current: string; written: boolean; recorded: string[] }>`
        with current_version as (
          select version from webhook_subscription_version for share
        ), outbox_keys as (
          select * from unnest(
            ${textArray(outbox.map((key) => key.event_type))}::text[],
            ${textArray(outbox.map((key) => key.subject_id))}::text[],
            ${int4Array(outbox.map((key) => (key.needed ? 1 : 0)))}::integer[]
          ) as k (event_type, subject_id, needed)
        ), held as (
          -- Locked, so a sweep marking the same rows waits, then finds them gone.
          select o.event_type, o.subject_id, o.recorded from webhook_event_outbox o
          join outbox_keys k on k.event_type = o.event_type and k.subject_id = o.subject_id
          for update of o
        ), go as (
          select 1 from current_version
          where current_version.version = ${version}
            and not exists (
              select 1 from outbox_keys k join held h on h.event_type = k.event_type and h.subject_id = k.subject_id
              where k.needed = 1 and h.recorded)
        ), taken as (
          delete from webhook_event_outbox o using held h
          where o.event_type = h.event_type and o.subject_id = h.subject_id and not h.recorded
            and exists (select 1 from go)
        ), journal as (
          insert into webhook_delivery_journal
            (batch_id, claim_token, claimed_until, created_at, delivery_ids, webhook_ids, event_ids, event_types, bodies)
          select ${batch.batchId}::uuid, ${batch.token}, ${batch.until.toISOString()}::timestamptz,
                 ${batch.createdAt.toISOString()}::timestamptz,
                 ${uuidArray(batch.deliveryIds)}::uuid[], ${uuidArray(batch.webhookIds)}::uuid[],
                 ${textArray(batch.eventIds)}::text[], ${textArray(batch.eventTypes)}::text[],
                 ${textArray(batch.bodies)}::text[]
          from go
          where ${batch.deliveryIds.length} > 0
        )
        select (select version from current_version) as current, exists (select 1 from go) as written,
               array(select h.event_type || ' ' || h.subject_id from held h where h.recorded) as recorded`.execute(
        db,
      );
      const row = result.rows[0];
      return {
        versionCurrent: Number(row?.current) === version,
        written: row?.written === true,
        recordedElsewhere: new Set(row?.recorded ?? []),
      };
    },
  };
}

export function createWebhookJournal(db: Kysely<DatabaseSchema>, rowsWritten: (count: number) => void) {
  return {
    ...createSubscriptionJournal(db),

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
      rowsWritten(records.length);
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
          on conflict do nothing
          returning 1
        )
        select (select count(*) from expired) as batches, (select count(*) from inserted) as written`.execute(
        db,
      );
      return Number(result.rows[0]?.batches ?? 0);
    },
  };
}

const UNIQUE_VIOLATION = '23505';

/**
 * Counts rows written to webhook_deliveries and analyses it as it grows (auto-analyze.ts):
 * statistics for the columns the claim, the API's listings and the conflict checks filter, join
 * and sort on (not the bodies, snippets and errors), from a sample of 6,000 rows.
 */
export function analyzeDeliveriesAsTheyGrow(db: Kysely<DatabaseSchema>): (rowsWritten: number) => void {
  return createAutoAnalyze(db as Kysely<unknown>, 'webhook_deliveries', {
    columns: [
      'delivery_id',
      'webhook_id',
      'event_id',
      'event_type',
      'status',
      'next_attempt_at',
      'claim_token',
      'created_at',
    ],
    statisticsTarget: 20,
  });
}

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
      ${skipClashes ? sql`on conflict do nothing` : sql``}
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

/** The arrays of what a delivery is (unnested as delivery_id, webhook_id, event_id, event_type, body). */
function deliveryArrays(records: readonly FirstResult[]) {
  const column = <T>(pick: (record: FirstResult) => T) => records.map(pick);
  return sql`${uuidArray(column((record) => record.delivery_id))}::uuid[],
    ${uuidArray(column((record) => record.webhook_id))}::uuid[],
    ${textArray(column((record) => record.event_id))}::text[],
    ${textArray(column((record) => record.event_type))}::text[],
    ${textArray(column((record) => record.body))}::text[]`;
}

/** The rows of a batch of deliveries answered at their first attempt: nine arrays, not thirteen. */
function deliveredRows(records: readonly FirstResult[]) {
  const column = <T>(pick: (record: FirstResult) => T) => records.map(pick);
  return sql`select v.delivery_id, v.webhook_id, v.event_id, v.event_type, v.body, 'delivered', 1,
           null::timestamptz, v.response_status, v.response_snippet, null::text, v.created_at,
           v.attempted_at, v.attempted_at
    from unnest(
           ${deliveryArrays(records)},
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
           ${deliveryArrays(records)},
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
