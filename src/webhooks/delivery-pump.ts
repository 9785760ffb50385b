/**
 * The dispatcher's pump (see dispatcher.ts): fills free slots with journalled deliveries, claims
 * due rows (FOR UPDATE SKIP LOCKED) for the rest, and goes round until nothing is due and every
 * result is written. One pump runs at a time; a request while it runs makes it go round again.
 */
import { randomUUID } from 'node:crypto';
import type { WebhooksRepository } from '../db/webhooks-repository.js';
import type { AttemptLauncher } from './attempt-launching.js';
import type { DispatchState } from './dispatch-state.js';
import type { ResultWriters } from './result-writing.js';

/** How often due rows are claimed (at least) while journalled deliveries wait for slots. */
const CLAIM_WHILE_READY_MS = 100;

export interface DeliveryPump {
  /** Runs the pump (or has the running one go round again); resolves with how many were sent. */
  kick(force?: boolean): Promise<number>;
  /** Asks for a pump soon: once per turn however often it is called. */
  wake(): void;
  /** The pump under way, if any. */
  running(): Promise<number> | undefined;
}

export interface DeliveryPumpOptions {
  state: DispatchState;
  repository: WebhooksRepository;
  launcher: AttemptLauncher;
  results: ResultWriters;
  /** Recovers what dead dispatchers left (at most once a second unless forced). */
  sweep: (force: boolean) => Promise<void>;
  now: () => Date;
  /** How long a claimed row is leased (ms). */
  leaseLength: number;
  concurrency: number;
  onError: (error: unknown, message: string) => void;
}

export function createDeliveryPump(options: DeliveryPumpOptions): DeliveryPump {
  const { state, repository, launcher, results, now, concurrency } = options;
  // Slots are refilled a quarter at a time, so a busy pump costs one claim per several
  // deliveries rather than one per delivery.
  const refill = Math.max(1, Math.floor(concurrency / 4));
  let pumping: Promise<number> | undefined;
  let again = false;
  let lastClaim = 0;

  async function pump(force: boolean): Promise<number> {
    let sent = 0;
    await options.sweep(force);
    for (;;) {
      sent += launcher.launchReady();
      const free = concurrency - state.inFlight;
      // While journalled deliveries wait, slots go to them: a claim is a round trip that would
      // leave freed slots empty meanwhile. Due rows are still claimed now and then.
      const claimTime = state.ready.size === 0 || Date.now() - lastClaim >= CLAIM_WHILE_READY_MS;
      if (claimTime && (free >= refill || state.inFlight === 0)) {
        lastClaim = Date.now();
        const at = now();
        const claimed = await repository.claimDue({
          now: at,
          limit: free,
          token: randomUUID(),
          leaseUntil: new Date(at.getTime() + options.leaseLength),
        });
        for (const row of claimed) launcher.launchClaimed(row);
        sent += claimed.length;
        if (claimed.length === free) continue;
      }
      if (state.inFlight === 0) {
        if (!results.busy()) return sent;
        // Results are in only once written; then look again (a retry may be due already).
        await results.idle();
        continue;
      }
      // Slots are full, or nothing is due while attempts run: go again when one finishes
      // (its retry may already be due under a test clock, or new rows may have arrived).
      await launcher.nextFreeSlot();
    }
  }

  function kick(force = false): Promise<number> {
    if (pumping) {
      again = true;
      return pumping;
    }
    const run = pump(force)
      .catch((error) => {
        options.onError(error, 'webhook dispatcher: claiming due deliveries failed');
        return 0;
      })
      .finally(() => {
        pumping = undefined;
        if (again && !state.stopped) {
          again = false;
          void kick();
        }
      });
    pumping = run;
    return run;
  }

  // One pump request per turn however many events were recorded in it.
  let wakeQueued = false;
  function wake(): void {
    if (state.stopped || !state.started) return;
    // A pump waiting for a slot goes round now (new deliveries may fit the free ones).
    launcher.nudge();
    if (wakeQueued) return;
    wakeQueued = true;
    setImmediate(() => {
      wakeQueued = false;
      void kick();
    });
  }

  return { kick, wake, running: () => pumping };
}
