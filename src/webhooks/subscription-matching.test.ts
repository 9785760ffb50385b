import { describe, expect, it } from 'vitest';
import type { EventToRecord, SnapshotSubscription } from '../db/webhooks-repository.js';
import { createMatcher, subscriptionMatches } from './subscription-matching.js';

const subscription = (changes: Partial<SnapshotSubscription> = {}): SnapshotSubscription => ({
  webhook_id: 'w1',
  url: 'http://example.test/hook',
  secret: 's',
  event_types: ['storage.object_created', 'execution.started'],
  filters: {},
  enabled: true,
  ...changes,
});
const event = (changes: Partial<EventToRecord> = {}): EventToRecord => ({
  event_id: 'e1',
  event_type: 'storage.object_created',
  body: '{}',
  created_at: new Date(0),
  config_id: 'c1',
  execution_id: 'x1',
  route_id: 'r1',
  adapter_name: 'a1',
  ...changes,
});

describe('subscription matching', () => {
  it('needs the event type listed and the subscription enabled', () => {
    expect(subscriptionMatches(subscription(), event())).toBe(true);
    expect(subscriptionMatches(subscription(), event({ event_type: 'lineage.failed' }))).toBe(false);
    expect(subscriptionMatches(subscription({ enabled: false }), event())).toBe(false);
  });

  it('needs every filter set to equal the event value (AND)', () => {
    expect(subscriptionMatches(subscription({ filters: { config_id: 'c1', route_id: 'r1' } }), event())).toBe(
      true,
    );
    expect(subscriptionMatches(subscription({ filters: { config_id: 'c1', route_id: 'r2' } }), event())).toBe(
      false,
    );
    expect(subscriptionMatches(subscription({ filters: { adapter_name: 'a2' } }), event())).toBe(false);
  });

  it('never matches a filter on a value the event does not have', () => {
    const executionEvent = event({
      event_type: 'execution.started',
      route_id: undefined,
      adapter_name: undefined,
    });
    expect(subscriptionMatches(subscription({ filters: { route_id: 'r1' } }), executionEvent)).toBe(false);
    expect(subscriptionMatches(subscription({ filters: { execution_id: 'x1' } }), executionEvent)).toBe(true);
  });

  it('gives every matching subscription, deciding once per distinct type and filter values', () => {
    const all = [
      subscription({ webhook_id: 'a' }),
      subscription({ webhook_id: 'b', filters: { route_id: 'r1' } }),
      subscription({ webhook_id: 'c', filters: { route_id: 'r2' } }),
    ];
    const match = createMatcher(all);
    expect(match(event()).map((found) => found.webhook_id)).toEqual(['a', 'b']);
    expect(match(event({ event_id: 'e2' }))).toBe(match(event()));
    expect(match(event({ route_id: 'r2' })).map((found) => found.webhook_id)).toEqual(['a', 'c']);
  });
});
