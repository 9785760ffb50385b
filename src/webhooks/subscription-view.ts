/**
 * A dispatcher's view of the subscriptions: read with their version (see webhook-journal.ts),
 * kept in memory, read again on demand. Versions only grow, so a read that finished after a
 * newer one is dropped.
 */
import type { SnapshotSubscription, SubscriptionSnapshot } from '../db/webhooks-repository.js';

export interface SubscriptionViewSnapshot extends SubscriptionSnapshot {
  byId: Map<string, SnapshotSubscription>;
  /** When it was read (Date.now()). */
  loadedAt: number;
}

export interface SubscriptionView {
  /** The subscriptions as last read; read first if they never were. */
  current(): Promise<SubscriptionViewSnapshot>;
  /** The subscriptions as last read, if they were. */
  latest(): SubscriptionViewSnapshot | undefined;
  /** Reads them again: a read in progress is followed by one more. */
  reload(): Promise<void>;
  /** Resolves when no read is in progress. */
  settled(): Promise<void>;
}

export function createSubscriptionView(read: () => Promise<SubscriptionSnapshot>): SubscriptionView {
  let snapshot: SubscriptionViewSnapshot | undefined;
  let loading: Promise<void> | undefined;
  let reloadWanted = false;

  function reload(): Promise<void> {
    reloadWanted = true;
    loading ??= (async () => {
      try {
        while (reloadWanted) {
          reloadWanted = false;
          const fresh = await read();
          if (!snapshot || fresh.version >= snapshot.version)
            snapshot = {
              ...fresh,
              byId: new Map(
                fresh.subscriptions.map((subscription) => [subscription.webhook_id, subscription]),
              ),
              loadedAt: Date.now(),
            };
        }
      } finally {
        loading = undefined;
      }
    })();
    return loading;
  }

  return {
    async current() {
      if (!snapshot) await reload();
      return snapshot as SubscriptionViewSnapshot;
    },
    latest: () => snapshot,
    reload,
    async settled() {
      await loading?.catch(() => {});
    },
  };
}
