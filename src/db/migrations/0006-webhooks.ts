import type { Migration } from './migration.js';

/**
 * Webhook subscriptions and their deliveries (spec 2.7, 3.5, 6.1, 6.2). A delivery row is the
 * durable outbox of one event for one subscription: written when the event happens, claimed by
 * a dispatcher with a lease (`claimed_until`, `claim_token`), updated after each attempt.
 * Deleting a subscription deletes its delivery history (spec 4.10).
 */
export const webhooks: Migration = {
  id: 6,
  name: 'webhooks',
  statements: [
    `create table webhook_subscriptions (
       webhook_id uuid primary key,
       url text not null,
       secret text not null,
       event_types jsonb not null,
       filters jsonb not null default '{}',
       enabled boolean not null default true,
       created_at timestamptz not null,
       updated_at timestamptz not null
     )`,
    `create table webhook_deliveries (
       delivery_id uuid primary key,
       webhook_id uuid not null references webhook_subscriptions (webhook_id) on delete cascade,
       event_id text not null,
       event_type text not null,
       body text not null,
       status text not null,
       attempts integer not null default 0,
       manual_retries integer not null default 0,
       next_attempt_at timestamptz,
       claimed_until timestamptz,
       claim_token text,
       response_status integer,
       response_snippet text,
       error text,
       created_at timestamptz not null,
       last_attempt_at timestamptz,
       delivered_at timestamptz
     )`,
    // The dispatcher's scan: only rows still to be sent, in due order.
    `create index webhook_deliveries_due on webhook_deliveries (next_attempt_at)
       where status in ('pending', 'pending_retry')`,
    'create index webhook_deliveries_by_webhook on webhook_deliveries (webhook_id, created_at)',
  ],
};
