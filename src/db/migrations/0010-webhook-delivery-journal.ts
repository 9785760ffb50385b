import type { Migration } from './migration.js';

/**
 * A journal of recorded webhook deliveries, so a delivery costs one row write instead of two.
 * The dispatcher records a batch of events as one journal row, leased to itself, before it
 * sends any of them; each delivery then becomes a row of webhook_deliveries once, in its state
 * after the first attempt, and the journal row goes when all of its deliveries have rows. A
 * journal row whose lease ran out (its dispatcher died) is turned into pending rows by any
 * dispatcher. Arrays hold one element per delivery (an event matching two subscriptions is
 * there twice). webhook_delivery_records shows both as one relation, for the API.
 * Dispatchers match events to subscriptions in memory: webhook_subscription_version counts
 * changes to the subscriptions (each change bumps it in its transaction), and a journal or
 * result write commits only if the version its dispatcher matched with is still current.
 * See webhooks-repository.ts and docs/webhooks.md.
 */
export const webhookDeliveryJournal: Migration = {
  id: 10,
  name: 'webhook-delivery-journal',
  statements: [
    `create table webhook_subscription_version (
       singleton boolean primary key default true check (singleton),
       version bigint not null
     )`,
    'insert into webhook_subscription_version (version) values (1)',
    `create table webhook_delivery_journal (
       batch_id uuid primary key,
       claim_token text not null,
       claimed_until timestamptz not null,
       created_at timestamptz not null,
       delivery_ids uuid[] not null,
       webhook_ids uuid[] not null,
       event_ids text[] not null,
       event_types text[] not null,
       bodies text[] not null
     )`,
    'create index webhook_delivery_journal_expiry on webhook_delivery_journal (claimed_until)',
    `create view webhook_delivery_records as
       select delivery_id, webhook_id, event_id, event_type, body, status, attempts, manual_retries,
              next_attempt_at, claimed_until, claim_token, response_status, response_snippet, error,
              created_at, last_attempt_at, delivered_at
       from webhook_deliveries
       union all
       select x.delivery_id, x.webhook_id, x.event_id, x.event_type, x.body, 'pending', 0, 0,
              j.created_at, j.claimed_until, j.claim_token, null::integer, null::text, null::text,
              j.created_at, null::timestamptz, null::timestamptz
       from webhook_delivery_journal j
       cross join lateral unnest(j.delivery_ids, j.webhook_ids, j.event_ids, j.event_types, j.bodies)
         as x (delivery_id, webhook_id, event_id, event_type, body)
       where not exists (select 1 from webhook_deliveries d where d.delivery_id = x.delivery_id)`,
  ],
};
