import type { Migration } from './migration.js';

/**
 * Webhook deliveries without the foreign key to their subscription. Its check ran once per
 * delivery written (a trigger querying and locking the subscription row for every row, about
 * a third of the cost of recording a delivery on PGlite). The repository keeps the same
 * guarantees by other means: recording locks each matching subscription once per statement
 * (FOR KEY SHARE, so a concurrent delete waits for it), and deleting a subscription deletes
 * its deliveries in the same transaction (see webhooks-repository.ts).
 */
export const webhookDeliveryWrites: Migration = {
  id: 8,
  name: 'webhook-delivery-writes',
  statements: ['alter table webhook_deliveries drop constraint if exists webhook_deliveries_webhook_id_fkey'],
};
