/**
 * The durable webhook dispatcher. Two halves:
 * - the recorder listens to the event bus and records each batch of events raised together
 *   before any of it is sent. It matches them to subscriptions in memory and writes the batch's
 *   deliveries as one journal row leased to itself (see webhooks-repository.ts), which commits
 *   only while the subscriptions it matched with are still current; then it sends them from
 *   memory as slots free up. Each such delivery becomes a row once, in its state after the
 *   first attempt (one row write per delivery: recording it as a row and then writing its
 *   result cost the database twice as much). When more are waiting than it can send soon, a
 *   batch is recorded as pending rows instead, for whichever dispatcher claims them.
 * - the pump leases due rows (FOR UPDATE SKIP LOCKED), sends up to `concurrency` at once and
 *   writes each result with the next step of the 6.2 policy.
 * Rows and journal rows are the only state: a restarted dispatcher finds pending rows where it
 * left them, a journal row whose dispatcher died is turned into pending rows by any dispatcher
 * once its lease runs out, and a row whose dispatcher died mid-send is taken again once its
 * lease runs out (at-least-once; X-Svc-Delivery is the receiver's idempotency key). A
 * journalled delivery whose lease has run too short by the time a slot frees up is written as
 * a pending row and claimed like any other.
 * Times come from `now()`, so a test clock drives the whole schedule; `poll()` sends what is
 * due and resolves when the results are in.
 *
 * The parts, each in its own module, share a DispatchState (dispatch-state.ts): recording
 * (event-recording.ts), signing ahead (ahead-signing.ts), launching attempts
 * (attempt-launching.ts), writing results (result-writing.ts), the pump (delivery-pump.ts) and
 * the sweep of what dead dispatchers left (left-behind-sweep.ts). This file wires them.
 */

import type { WebhooksRepository } from '../db/webhooks-repository.js';
import type { EventBus } from '../events/event-bus.js';
import { newTimeOrderedId } from '../runtime/time-ordered-ids.js';
import { signAhead } from './ahead-signing.js';
import { createAttemptLauncher } from './attempt-launching.js';
import { createDeliveryPump } from './delivery-pump.js';
import { createDispatchState } from './dispatch-state.js';
import { createEventRecorder } from './event-recording.js';
import { createLeftBehindSweep } from './left-behind-sweep.js';
import { createResultWriters, unsent } from './result-writing.js';
import { ATTEMPT_TIMEOUT_MS } from './retry-policy.js';
import type { Sender } from './sender.js';
import { createSigner, type Signer } from './signer.js';
import { createSubscriptionView } from './subscription-view.js';

export interface DispatcherOptions {
  repository: WebhooksRepository;
  sender: Sender;
  /** Events to record; absent = this dispatcher only sends. */
  events?: EventBus | undefined;
  /** The schedule's clock (due times, retry times, leases). */
  now?: () => Date;
  /** The signing clock (webhook-timestamp), which receivers compare with their own. */
  wallClock?: () => Date;
  newId?: () => string;
  /** Deliveries in flight at once (default 64). */
  concurrency?: number;
  /** How often due rows are looked for when nothing wakes the pump (default 1 s). */
  pollIntervalMs?: number;
  /** Per-attempt timeout, also sizing the lease (default ATTEMPT_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Signs journalled batches off the service thread (default: a signing thread of its own). */
  signer?: Signer;
  onError?: (error: unknown, message: string) => void;
}

export interface Dispatcher {
  /** Starts the timer; recorded events and manual retries wake the pump early. */
  start(): void;
  /** Stops the timer, waits for attempts in flight and events being recorded. */
  stop(): Promise<void>;
  /** Sends everything due now (until nothing is left) and resolves with how many were sent. */
  poll(): Promise<number>;
  /** Asks for a pump soon (after a manual retry). */
  wake(): void;
  /** Resolves when every event raised so far is recorded. */
  flush(): Promise<void>;
  /**
   * A subscription was created, updated, disabled or deleted: the dispatcher reads them again,
   * and journalled deliveries waiting in memory are checked against the new view before they
   * are sent. (Other instances notice within a second, and their writes wait for the change.)
   */
  subscriptionsChanged(): void;
}

/** Extra lease time beyond the attempt timeout, for writing the result back. */
const LEASE_MARGIN_MS = 60_000;
/** Journalled deliveries, per slot, that may wait in memory for a free slot. */
const READY_PER_SLOT = 256;

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { repository, sender } = options;
  const now = options.now ?? (() => new Date());
  const wallClock = options.wallClock ?? (() => new Date());
  const newId = options.newId ?? newTimeOrderedId;
  const concurrency = options.concurrency ?? 64;
  const timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  // Without a logger the failures still show on stderr: dropped deliveries are never silent.
  const onError = options.onError ?? ((error: unknown, message: string) => console.error(message, error));
  const signer =
    options.signer ??
    createSigner((error) => onError(error, 'webhook signing thread failed: signing on the service thread'));
  const leaseLength = timeoutMs + LEASE_MARGIN_MS;

  const state = createDispatchState();
  // The subscriptions as last read, with their version.
  const subscriptions = createSubscriptionView(() => repository.subscriptionSnapshot());
  const reloadSubscriptions = () =>
    subscriptions
      .reload()
      .catch((error) => onError(error, 'webhook dispatcher: reading subscriptions failed'));

  const results = createResultWriters({ repository, state, subscriptions, onError });
  const launcher = createAttemptLauncher({
    state,
    sender,
    results,
    subscriptions,
    now,
    wallClock,
    concurrency,
    timeoutMs,
    onError,
  });
  const sweep = createLeftBehindSweep({ repository, now, newId, recorded: () => pump.wake() });
  const pump = createDeliveryPump({
    state,
    repository,
    launcher,
    results,
    sweep,
    now,
    leaseLength,
    concurrency,
    onError,
  });
  const recorder = createEventRecorder({
    repository,
    state,
    subscriptions,
    now,
    newId,
    leaseLength,
    readyLimit: concurrency * READY_PER_SLOT,
    journalled: (items) => signAhead(signer, items, wallClock, onError),
    recorded: () => pump.wake(),
    onError,
  });

  let timer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  if (options.events) unsubscribe = options.events.subscribe((event) => recorder.add(event));

  return {
    start() {
      if (timer) return;
      state.stopped = false;
      timer = setInterval(() => void pump.kick(), options.pollIntervalMs ?? 1000);
      timer.unref();
      state.started = true;
      void pump.kick();
    },
    async stop() {
      state.stopped = true;
      if (timer) clearInterval(timer);
      timer = undefined;
      state.started = false;
      unsubscribe?.();
      unsubscribe = undefined;
      await recorder.idle();
      for (let running = pump.running(); running; running = pump.running()) await running;
      await launcher.settled();
      // What was journalled and not sent becomes pending rows, for the next dispatcher.
      for (const item of state.ready.drain()) results.first(unsent(item, now()));
      await subscriptions.settled();
      await results.idle();
      sender.close();
      signer.close();
    },
    async poll() {
      for (let running = pump.running(); running; running = pump.running()) await running;
      return pump.kick(true);
    },
    wake: () => pump.wake(),
    async flush() {
      await recorder.idle();
    },
    subscriptionsChanged() {
      if (!state.stopped) void reloadSubscriptions();
    },
  };
}
