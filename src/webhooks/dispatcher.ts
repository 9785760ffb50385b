/**
 * The durable webhook dispatcher. Two halves:
 * - the recorder listens to the event bus and writes one delivery row per matching
 *   subscription (group-committed: events raised together cost one statement);
 * - the pump leases due rows (FOR UPDATE SKIP LOCKED, see webhooks-repository.ts), sends up to
 *   `concurrency` at once and writes each result with the next step of the 6.2 policy.
 * Rows are the only state: a restarted dispatcher finds pending rows where it left them, and a
 * row whose dispatcher died mid-send is taken again once its lease runs out (at-least-once;
 * X-Svc-Delivery is the receiver's idempotency key).
 * A started dispatcher writes the rows of the events it records already leased to itself
 * (up to READY_PER_SLOT x concurrency rows waiting) and sends them straight from memory: a
 * claim statement per batch cost more than the insert and the result together. A queued row
 * whose lease has run too short by the time a slot frees up is left to be claimed again.
 * Times come from `now()`, so a test clock drives the whole schedule; `poll()` sends what is due and resolves when the results are in.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { uuidv7 } from 'uuidv7';
import type { AttemptRecord, EventToRecord, WebhooksRepository } from '../db/webhooks-repository.js';
import { createGroupWriter } from '../engine/batcher.js';
import type { EventBus, WeirEvent } from '../events/event-bus.js';
import { eventBody, filterValues } from './event-body.js';
import { createFifo } from './fifo.js';
import { ATTEMPT_TIMEOUT_MS, nextStep } from './retry-policy.js';
import type { Sender } from './sender.js';

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
  onError?: (error: unknown, message: string) => void;
}

/** What an attempt needs: a claimed row, or a leased row with the event it was recorded for. */
interface Leased {
  /** When the row was leased, in the dispatcher's sequence (see `targets`). */
  leasedAt?: number;
  delivery_id: string;
  webhook_id: string;
  claim_token: string | null;
  claimed_until: Date | null;
  url: string;
  secret: string;
  event_type: string;
  body: string;
  attempts: number;
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
  /** Resolves when every event raised so far is written as deliveries. */
  flush(): Promise<void>;
  /**
   * A subscription was updated, disabled or deleted: rows already leased and waiting in memory
   * are checked against it again before they are sent. (Other instances notice within a second.)
   */
  subscriptionsChanged(): void;
}

/** Extra lease time beyond the attempt timeout, for writing the result back. */
const LEASE_MARGIN_MS = 60_000;
/** What a queued row's lease must still cover beyond the attempt timeout to be sent. */
const RESULT_MARGIN_MS = 10_000;
/** Rows recorded already leased, per slot, that may wait in memory for a free slot. */
const READY_PER_SLOT = 256;
/** Writes of a batch of events before its deliveries are given up, and the first wait between. */
const RECORD_ATTEMPTS = 5;
const RECORD_RETRY_MS = 100;
/** How long the dispatcher trusts its view of the subscriptions (enabled, URL, secret). */
const TARGETS_MAX_AGE_MS = 1000;

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { repository, sender } = options;
  const now = options.now ?? (() => new Date());
  const wallClock = options.wallClock ?? (() => new Date());
  const newId = options.newId ?? uuidv7;
  const concurrency = options.concurrency ?? 64;
  const timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  const onError = options.onError ?? (() => {});

  // Leased rows waiting for a free slot, oldest first.
  const ready = createFifo<Leased>();
  const readyLimit = concurrency * READY_PER_SLOT;
  const leaseLength = () => timeoutMs + LEASE_MARGIN_MS;

  // Events become delivery rows in group-committed batches (no promise per event). A batch
  // the database refuses is tried again a few times (a restarting database, a lost
  // connection) before its deliveries are given up and reported. The rows keep their event
  // ids across attempts, so should a write that seemed to fail have landed after all, the
  // receiver sees the same event id (body `id`) twice.
  const recorder = createGroupWriter<WeirEvent>(async (events) => {
    const rows = eventRows(events);
    for (let attempt = 1; ; attempt++) {
      try {
        await record(rows);
        wake();
        return;
      } catch (error) {
        if (attempt >= RECORD_ATTEMPTS || stopped) {
          onError(error, `webhook deliveries for ${events.length} events could not be recorded`);
          return;
        }
        await sleep(RECORD_RETRY_MS * 2 ** (attempt - 1));
      }
    }
  });
  function eventRows(events: WeirEvent[]): EventToRecord[] {
    const at = now();
    const rows: EventToRecord[] = new Array(events.length);
    for (let index = 0; index < events.length; index++) {
      const event = events[index] as WeirEvent;
      const filters = filterValues(event);
      const eventId = newId();
      rows[index] = {
        event_id: eventId,
        event_type: event.type,
        body: JSON.stringify(eventBody(event, eventId)),
        created_at: at,
        config_id: filters.config_id,
        execution_id: filters.execution_id,
        route_id: filters.route_id,
        adapter_name: filters.adapter_name,
      };
    }
    return rows;
  }
  async function record(rows: EventToRecord[]): Promise<void> {
    const at = now();
    const leaseLimit = timer && !stopped ? Math.max(0, readyLimit - ready.size) : 0;
    const { leased } = await repository.recordEvents(
      rows,
      leaseLimit > 0
        ? { token: randomUUID(), until: new Date(at.getTime() + leaseLength()), limit: leaseLimit }
        : undefined,
    );
    if (leased.length === 0) return;
    const leasedAt = ++sequence;
    const byEventId = new Map<string, EventToRecord>();
    for (const row of rows) byEventId.set(row.event_id, row);
    for (const row of leased) {
      const event = byEventId.get(row.event_id);
      if (!event) continue;
      ready.push({
        leasedAt,
        delivery_id: row.delivery_id,
        webhook_id: row.webhook_id,
        claim_token: row.claim_token,
        claimed_until: row.claimed_until,
        url: row.url,
        secret: row.secret,
        event_type: event.event_type,
        body: event.body,
        attempts: 0,
      });
    }
  }
  // Results are written in group-committed batches too. A slot frees when the answer
  // arrives, not when its result is written: with group commit that write waits for the batch
  // before it, and holding the slot meanwhile left the receiver idle.
  const outcomes = createGroupWriter<AttemptRecord>(async (records) => {
    try {
      await repository.recordOutcomes(records);
    } catch (error) {
      // The leases run out and the rows are taken again: nothing is lost.
      onError(error, `results of ${records.length} webhook deliveries not recorded`);
    }
  });

  let inFlight = 0;
  // Resolved by the next attempt to finish. (Promise.race over the attempts in flight added a
  // reaction to each of them on every wait: quadratic work on the busiest path.)
  let slotFreed: (() => void) | undefined;
  const nextFreeSlot = () =>
    new Promise<void>((resolve) => {
      slotFreed = resolve;
    });
  const allSettled: Array<() => void> = [];
  let pumping: Promise<number> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  let stopped = false;

  if (options.events) unsubscribe = options.events.subscribe((event) => recorder.add(event));

  /** One attempt in a slot; the slot frees when the answer is in, before its result is written. */
  async function attempt(row: Leased): Promise<void> {
    inFlight++;
    try {
      const result = await sender.send({
        url: row.url,
        secret: row.secret,
        deliveryId: row.delivery_id,
        eventType: row.event_type,
        body: row.body,
        timestamp: wallClock(),
      });
      const attempts = row.attempts + 1;
      const at = now();
      const step = nextStep(attempts, result.outcome, at);
      const status = result.outcome.kind === 'response' ? result.outcome.status : null;
      outcomes.add({
        delivery_id: row.delivery_id,
        claim_token: row.claim_token as string,
        status: step.status,
        attempts,
        next_attempt_at: step.nextRetryAt,
        response_status: status,
        response_snippet: result.snippet,
        error: result.error ?? (step.status === 'delivered' ? null : `HTTP ${status}`),
        attempted_at: at,
      });
    } catch (error) {
      onError(error, `webhook delivery ${row.delivery_id}: attempt failed`);
    } finally {
      inFlight--;
      const wakePump = slotFreed;
      slotFreed = undefined;
      wakePump?.();
      if (inFlight === 0 && allSettled.length > 0) for (const settled of allSettled.splice(0)) settled();
    }
  }

  function launch(row: Leased): void {
    void attempt(row);
  }

  // The subscriptions as last read. A row leased at recording waits in memory for a slot; if
  // its subscription is disabled or deleted meanwhile it must not go out, and a changed URL or
  // secret applies to it. `sequence` orders leases and reads: only a read that started after a
  // row was leased can tell that its subscription is gone.
  let sequence = 0;
  let targets:
    | {
        byId: Map<string, { url: string; secret: string; enabled: boolean }>;
        readAt: number;
        loadedAt: number;
      }
    | undefined;
  let loadingTargets: Promise<void> | undefined;
  let targetsChanged = false;
  function refreshTargets(): void {
    targetsChanged = true;
    loadingTargets ??= (async () => {
      while (targetsChanged) {
        targetsChanged = false;
        const readAt = ++sequence;
        const rows = await repository.listTargets();
        targets = { byId: new Map(rows.map((row) => [row.webhook_id, row])), readAt, loadedAt: Date.now() };
      }
    })()
      .catch((error) => onError(error, 'webhook dispatcher: reading subscriptions failed'))
      .finally(() => {
        loadingTargets = undefined;
      });
  }

  /** send (with the subscription's current URL and secret), drop (deleted) or park (disabled). */
  function verdict(row: Leased): 'send' | 'drop' | 'park' {
    if (!targets || row.leasedAt === undefined || targets.readAt < row.leasedAt) return 'send';
    const target = targets.byId.get(row.webhook_id);
    if (!target) return 'drop';
    if (!target.enabled) return 'park';
    row.url = target.url;
    row.secret = target.secret;
    return 'send';
  }

  /** Sends queued leased rows into free slots; a row whose lease could run out mid-attempt is left. */
  function launchReady(): number {
    if (ready.size === 0) return 0;
    if (!targets || Date.now() - targets.loadedAt > TARGETS_MAX_AGE_MS) refreshTargets();
    let launched = 0;
    const parked: Leased[] = [];
    while (inFlight < concurrency && ready.size > 0) {
      const row = ready.take() as Leased;
      const leaseLeft = (row.claimed_until?.getTime() ?? 0) - now().getTime();
      if (leaseLeft < timeoutMs + RESULT_MARGIN_MS) continue;
      const next = verdict(row);
      if (next === 'park') parked.push(row);
      if (next !== 'send') continue;
      launch(row);
      launched++;
    }
    // A disabled subscription's rows are parked in the database (no due time): giving their
    // leases back leaves them there until it is enabled again.
    if (parked.length > 0)
      void repository
        .releaseLeases(parked)
        .catch((error) =>
          onError(error, 'webhook dispatcher: giving back leases of a disabled subscription failed'),
        );
    return launched;
  }

  // Slots are refilled a quarter at a time, so a busy pump costs one claim per several
  // deliveries rather than one per delivery.
  const refill = Math.max(1, Math.floor(concurrency / 4));

  async function pump(): Promise<number> {
    let sent = 0;
    for (;;) {
      sent += launchReady();
      const free = concurrency - inFlight;
      if (free >= refill || inFlight === 0) {
        const at = now();
        const claimed = await repository.claimDue({
          now: at,
          limit: free,
          token: randomUUID(),
          leaseUntil: new Date(at.getTime() + leaseLength()),
        });
        for (const row of claimed) launch(row);
        sent += claimed.length;
        if (claimed.length === free) continue;
      }
      if (inFlight === 0) {
        if (!outcomes.busy) return sent;
        // Results are in only once written; then look again (a retry may be due already).
        await outcomes.idle();
        continue;
      }
      // Slots are full, or nothing is due while attempts run: go again when one finishes
      // (its retry may already be due under a test clock, or new rows may have arrived).
      await nextFreeSlot();
    }
  }

  function kick(): Promise<number> {
    if (pumping) {
      again = true;
      return pumping;
    }
    const run = pump()
      .catch((error) => {
        onError(error, 'webhook dispatcher: claiming due deliveries failed');
        return 0;
      })
      .finally(() => {
        pumping = undefined;
        if (again && !stopped) {
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
    if (stopped || !timer || wakeQueued) return;
    wakeQueued = true;
    setImmediate(() => {
      wakeQueued = false;
      void kick();
    });
  }

  return {
    start() {
      if (timer) return;
      stopped = false;
      timer = setInterval(() => void kick(), options.pollIntervalMs ?? 1000);
      timer.unref();
      void kick();
    },
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = undefined;
      unsubscribe?.();
      unsubscribe = undefined;
      await recorder.idle();
      while (pumping) await pumping;
      if (inFlight > 0) await new Promise<void>((resolve) => allSettled.push(resolve));
      await loadingTargets;
      await outcomes.idle();
      // Whatever was leased and not sent is given back for the next dispatcher.
      await repository
        .releaseLeases(ready.drain())
        .catch((error) =>
          onError(error, 'webhook dispatcher: giving back unsent leases failed (they run out on their own)'),
        );
      sender.close();
    },
    async poll() {
      while (pumping) await pumping;
      return kick();
    },
    wake,
    async flush() {
      await recorder.idle();
    },
    subscriptionsChanged() {
      if (!stopped) refreshTargets();
    },
  };
}
