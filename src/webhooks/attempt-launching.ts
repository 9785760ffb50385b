/**
 * Launching the dispatcher's attempts (see dispatcher.ts) into at most `concurrency` slots:
 * journalled deliveries from `state.ready` and rows claimed by the pump. A slot frees when the
 * answer is in, and its result goes to the result writers.
 */
import type { ClaimedDelivery } from '../db/webhooks-repository.js';
import { recordWebhookAttempt } from '../metrics/metrics.js';
import { dropStaleSignatures } from './ahead-signing.js';
import type { DispatchState, Journalled } from './dispatch-state.js';
import { attemptResult, firstWrite, type ResultWriters, unsent } from './result-writing.js';
import type { Sender, SendResult } from './sender.js';
import type { Signatures } from './signer.js';
import type { SubscriptionView } from './subscription-view.js';

/** What a journalled delivery's lease must still cover beyond the attempt timeout to be sent. */
const RESULT_MARGIN_MS = 10_000;
/** How long the dispatcher trusts its view of the subscriptions when sending. */
const SUBSCRIPTIONS_MAX_AGE_MS = 1000;

export interface AttemptLauncher {
  /** Sends journalled deliveries into free slots; one whose lease could run out mid-attempt is written unsent. */
  launchReady(): number;
  /** Sends a claimed row (the caller counted a free slot for it). */
  launchClaimed(row: ClaimedDelivery): void;
  /** Resolves when the next attempt finishes, or nudge() is called. */
  nextFreeSlot(): Promise<void>;
  /** Wakes whoever waits in nextFreeSlot(). */
  nudge(): void;
  /** Resolves once no attempt is in flight. */
  settled(): Promise<void>;
}

export interface AttemptLauncherOptions {
  state: DispatchState;
  sender: Sender;
  results: ResultWriters;
  subscriptions: SubscriptionView;
  /** The schedule's clock, and the signing clock. */
  now: () => Date;
  wallClock: () => Date;
  concurrency: number;
  timeoutMs: number;
  onError: (error: unknown, message: string) => void;
}

export function createAttemptLauncher(options: AttemptLauncherOptions): AttemptLauncher {
  const { state, sender, results, subscriptions: subscriptionView, now, wallClock, onError } = options;
  // Resolved by the next attempt to finish. (Promise.race over the attempts in flight added a
  // reaction to each of them on every wait: quadratic work on the busiest path.)
  let slotFreed: (() => void) | undefined;
  const allSettled: Array<() => void> = [];
  const nudge = () => {
    const wakePump = slotFreed;
    slotFreed = undefined;
    wakePump?.();
  };

  /**
   * One attempt in a slot; the slot frees when the answer is in, before its result is written
   * (with group commit that write waits for the batch before it, and holding the slot meanwhile
   * left the receiver idle).
   */
  async function attempt(
    target: {
      url: string;
      secret: string;
      delivery_id: string;
      event_type: string;
      body: string | Uint8Array;
      signed?: Signatures | undefined;
    },
    done: (result: SendResult) => void,
  ): Promise<void> {
    state.inFlight++;
    const sentAt = performance.now();
    try {
      const result = await sender.send({
        url: target.url,
        secret: target.secret,
        deliveryId: target.delivery_id,
        eventType: target.event_type,
        body: target.body,
        timestamp: wallClock(),
        signed: target.signed,
      });
      recordWebhookAttempt(result.outcome, (performance.now() - sentAt) / 1000);
      done(result);
    } catch (error) {
      onError(error, `webhook delivery ${target.delivery_id}: attempt failed`);
    } finally {
      state.inFlight--;
      nudge();
      if (state.inFlight === 0 && allSettled.length > 0)
        for (const settled of allSettled.splice(0)) settled();
    }
  }

  function launchJournalled(item: Journalled, wallSeconds: number): void {
    // Signatures made ahead serve while fresh and made with the secret it is sent with.
    dropStaleSignatures(item, wallSeconds);
    void attempt(item, (result) => results.first(firstWrite(item, attemptResult(1, result, now()))));
  }

  /**
   * send (with the subscription's current URL and secret), or write it unsent: its
   * subscription is gone or disabled as of a newer view than the one it was matched with.
   */
  function verdict(item: Journalled): 'send' | 'unsent' {
    const snapshot = subscriptionView.latest();
    if (!snapshot || snapshot.version === item.version) return 'send';
    const subscription = snapshot.byId.get(item.webhook_id);
    if (!subscription?.enabled) return 'unsent';
    item.url = subscription.url;
    item.secret = subscription.secret;
    return 'send';
  }

  return {
    launchReady() {
      if (state.ready.size === 0) return 0;
      const snapshot = subscriptionView.latest();
      if (!snapshot || Date.now() - snapshot.loadedAt > SUBSCRIPTIONS_MAX_AGE_MS)
        subscriptionView
          .reload()
          .catch((error) => onError(error, 'webhook dispatcher: reading subscriptions failed'));
      let launched = 0;
      // One reading of each clock for the whole loop (it does not wait): a Date per delivery
      // and clock was garbage by the thousand.
      const at = now();
      const wallSeconds = Math.floor(wallClock().getTime() / 1000);
      while (state.inFlight < options.concurrency && state.ready.size > 0) {
        const item = state.ready.take() as Journalled;
        const leaseLeft = item.lease.until - at.getTime();
        if (leaseLeft < options.timeoutMs + RESULT_MARGIN_MS || verdict(item) === 'unsent') {
          results.first(unsent(item, at));
          continue;
        }
        launchJournalled(item, wallSeconds);
        launched++;
      }
      return launched;
    },
    launchClaimed(row) {
      void attempt(row, (result) => {
        results.outcome({
          delivery_id: row.delivery_id,
          claim_token: row.claim_token as string,
          ...attemptResult(row.attempts + 1, result, now()),
        });
      });
    },
    nextFreeSlot: () =>
      new Promise<void>((resolve) => {
        slotFreed = resolve;
      }),
    nudge,
    async settled() {
      if (state.inFlight > 0) await new Promise<void>((resolve) => allSettled.push(resolve));
    },
  };
}
