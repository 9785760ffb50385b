import { describe, expect, it } from 'vitest';
import type { SnapshotSubscription } from '../db/webhooks-repository.js';
import type { JournalLease } from './dispatch-state.js';
import { matchDeliveries, rememberDeliveryIds } from './event-recording.js';

const subscription = (webhook_id: string, enabled = true): SnapshotSubscription => ({
  webhook_id,
  url: `http://127.0.0.1/${webhook_id}`,
  secret: `secret-${webhook_id}`,
  event_types: ['execution.completed'],
  filters: {},
  enabled,
});
const lease = (): JournalLease => ({ batchId: 'b', until: 0, size: 0, handedOver: 0, broken: false });
const row = (event_id: string, event_type = 'execution.completed') => ({
  event_id,
  event_type,
  body: Buffer.from('{}'),
  created_at: new Date(0),
});

describe('matchDeliveries', () => {
  it('gives one delivery per matching enabled subscription, with the version it was matched with', () => {
    let next = 0;
    const items = matchDeliveries(
      [row('e1'), row('e2', 'execution.failed')],
      { version: 7, subscriptions: [subscription('w1'), subscription('w2', false)] },
      lease(),
      new Map(),
      () => `d${++next}`,
    );
    expect(items.map((item) => [item.event_id, item.webhook_id, item.delivery_id, item.version])).toEqual([
      ['e1', 'w1', 'd1', 7],
    ]);
    expect(items[0]?.url).toBe('http://127.0.0.1/w1');
  });

  it('keeps the delivery ids of an earlier attempt for the same event and subscription', () => {
    let next = 0;
    const newId = () => `d${++next}`;
    const deliveryIds = new Map<string, string>();
    const snapshot = { version: 1, subscriptions: [subscription('w1'), subscription('w2')] };
    const first = matchDeliveries([row('e1')], snapshot, lease(), deliveryIds, newId);
    // The write did not go through.
    rememberDeliveryIds(first, deliveryIds);
    // The subscriptions changed meanwhile: matched again, a third subscription joins.
    const again = matchDeliveries(
      [row('e1')],
      { version: 2, subscriptions: [...snapshot.subscriptions, subscription('w3')] },
      lease(),
      deliveryIds,
      newId,
    );
    expect(first.map((item) => item.delivery_id)).toEqual(['d1', 'd2']);
    expect(again.map((item) => item.delivery_id)).toEqual(['d1', 'd2', 'd3']);
  });
});
