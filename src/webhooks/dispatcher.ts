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
import { uuidv7 } from 'uuidv7';
import type { AttemptRecord, WebhooksRepository } from '../db/webhooks-repository.js';
import { createBatcher } from '../engine/batcher.js';
import type { EventBus, WeirEvent } from '../events/event-bus.js';
import { eventBody, filterValues } from './event-body.js';
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
  delivery_id: string;
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
}

/** Extra lease time beyond the attempt timeout, for writing the result back. */
const LEASE_MARGIN_MS = 60_000;
/** What a queued row's lease must still cover beyond the attempt timeout to be sent. */
const RESULT_MARGIN_MS = 10_000;
/** Rows recorded already leased, per slot, that may wait in memory for a free slot. */
const READY_PER_SLOT = 256;

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { repository, sender } = options;
  const now = options.now ?? (() => new Date());
  const wallClock = options.wallClock ?? (() => new Date());
  const newId = options.newId ?? uuidv7;
  const concurrency = options.concurrency ?? 64;
  const timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  const onError = options.onError ?? (() => {});

  // Leased rows waiting for a free slot, oldest first.
  const ready: Leased[] = [];
  const readyLimit = concurrency * READY_PER_SLOT;
  const leaseLength = () => timeoutMs + LEASE_MARGIN_MS;

  const record = createBatcher(async (events: WeirEvent[]) => {
    const at = now();
    const leaseLimit = timer && !stopped ? Math.max(0, readyLimit - ready.length) : 0;
    const rows = events.map((event) => {
      const body = eventBody(event, newId());
      return {
        ...filterValues(event),
        event_id: body.id,
        event_type: event.type,
        body: JSON.stringify(body),
        created_at: at,
      };
    });
    const { leased } = await repository.recordEvents(
      rows,
      leaseLimit > 0
        ? { token: randomUUID(), until: new Date(at.getTime() + leaseLength()), limit: leaseLimit }
        : undefined,
    );
    if (leased.length > 0) {
      const byEventId = new Map(rows.map((row) => [row.event_id, row]));
      for (const row of leased) {
        const event = byEventId.get(row.event_id);
        if (event) ready.push({ ...row, event_type: event.event_type, body: event.body, attempts: 0 });
      }
    }
    return events.map(() => undefined);
  });
  const writeOutcome = createBatcher(async (records: AttemptRecord[]) => {
    await repository.recordOutcomes(records);
    return records.map(() => undefined);
  });

  const recording = new Set<Promise<void>>();
  const inFlight = new Set<Promise<void>>();
  // Resolved by the next attempt to finish. (Promise.race over the attempts in flight added a
  // reaction to each of them on every wait: quadratic work on the busiest path.)
  let slotFreed: (() => void) | undefined;
  const nextFreeSlot = () =>
    new Promise<void>((resolve) => {
      slotFreed = resolve;
    });
  // Results being written. A slot frees when the answer arrives, not when its result is
  // written: with group commit that write waits for the batch before it, and holding the slot
  // meanwhile left the receiver idle.
  const writing = new Set<Promise<void>>();
  let pumping: Promise<number> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  let stopped = false;

  function onEvent(event: WeirEvent): void {
    const written = record(event).then(
      () => wake(),
      (error) => onError(error, `webhook deliveries for ${event.type} could not be recorded`),
    );
    recording.add(written);
    void written.finally(() => recording.delete(written));
  }
  if (options.events) unsubscribe = options.events.subscribe(onEvent);

  async function attempt(row: Leased): Promise<void> {
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
    const written = writeOutcome({
      delivery_id: row.delivery_id,
      claim_token: row.claim_token as string,
      status: step.status,
      attempts,
      next_attempt_at: step.nextRetryAt,
      response_status: status,
      response_snippet: result.snippet,
      error: result.error ?? (step.status === 'delivered' ? null : `HTTP ${status}`),
      attempted_at: at,
    }).catch((error) =>
      // The lease runs out and the row is taken again: nothing is lost.
      onError(error, `webhook delivery ${row.delivery_id}: result not recorded`),
    );
    writing.add(written);
    void written.finally(() => writing.delete(written));
  }

  function launch(row: Leased): void {
    const running = attempt(row).catch((error) =>
      onError(error, `webhook delivery ${row.delivery_id}: attempt failed`),
    );
    inFlight.add(running);
    void running.finally(() => {
      inFlight.delete(running);
      const wakePump = slotFreed;
      slotFreed = undefined;
      wakePump?.();
    });
  }

  /** Sends queued leased rows into free slots; a row whose lease could run out mid-attempt is left. */
  function launchReady(): number {
    let launched = 0;
    while (inFlight.size < concurrency && ready.length > 0) {
      const row = ready.shift() as Leased;
      const leaseLeft = (row.claimed_until?.getTime() ?? 0) - now().getTime();
      if (leaseLeft < timeoutMs + RESULT_MARGIN_MS) continue;
      launch(row);
      launched++;
    }
    return launched;
  }

  // Slots are refilled a quarter at a time, so a busy pump costs one claim per several
  // deliveries rather than one per delivery.
  const refill = Math.max(1, Math.floor(concurrency / 4));

  async function pump(): Promise<number> {
    let sent = 0;
    for (;;) {
      sent += launchReady();
      const free = concurrency - inFlight.size;
      if (free >= refill || inFlight.size === 0) {
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
      if (inFlight.size === 0) {
        if (writing.size === 0) return sent;
        // Results are in only once written; then look again (a retry may be due already).
        await Promise.all([...writing]);
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
      await Promise.all([...recording]);
      while (pumping) await pumping;
      await Promise.all([...inFlight]);
      await Promise.all([...writing]);
      // Whatever was leased and not sent is given back for the next dispatcher.
      await repository
        .releaseLeases(ready.splice(0))
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
      while (recording.size > 0) await Promise.all([...recording]);
    },
  };
}
