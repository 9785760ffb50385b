/**
 * Which subscriptions an event goes to, decided in memory (the dispatcher's journal writes
 * commit only while the subscriptions matched with are current; see dispatcher.ts). The same
 * rule as the recording statement in webhooks-repository.ts: enabled, listing the event's
 * type, and every filter it sets equal to the event's value (an absent value is '', so a
 * filter on route_id never matches an execution event).
 */
import type { EventToRecord, SnapshotSubscription } from '../db/webhooks-repository.js';
import { FILTER_KEYS } from './event-body.js';

export function subscriptionMatches(subscription: SnapshotSubscription, event: EventToRecord): boolean {
  if (!subscription.enabled || !subscription.event_types.includes(event.event_type)) return false;
  for (const key of FILTER_KEYS) {
    const wanted = subscription.filters[key];
    if (wanted !== undefined && wanted !== null && wanted !== (event[key] ?? '')) return false;
  }
  return true;
}

/**
 * A matcher over one set of subscriptions that decides once per distinct (type, filter
 * values): the events of a batch mostly share them.
 */
export function createMatcher(
  subscriptions: readonly SnapshotSubscription[],
): (event: EventToRecord) => readonly SnapshotSubscription[] {
  const decided = new Map<string, SnapshotSubscription[]>();
  return (event) => {
    const key = `${event.event_type}\u0000${event.config_id ?? ''}\u0000${event.execution_id ?? ''}\u0000${event.route_id ?? ''}\u0000${event.adapter_name ?? ''}`;
    let found = decided.get(key);
    if (!found) {
      found = subscriptions.filter((subscription) => subscriptionMatches(subscription, event));
      if (decided.size >= 10_000) decided.clear();
      decided.set(key, found);
    }
    return found;
  };
}
