/**
 * The durable webhook dispatcher. Two halves:
 * - the recorder listens to the event bus and writes one delivery row per matching
 *   subscription (group-committed: events raised together cost one statement);
 * - the pump leases due rows (FOR UPDATE SKIP LOCKED, see webhooks-repository.ts), sends up to
 *   `concurrency` at once and writes each result with the next step of the 6.2 policy.
 * Rows are the only state: a restarted dispatcher finds pending rows where it left them, and a
 * row whose dispatcher died mid-send is taken again once its lease runs out (at-least-once;
 * X-Svc-Delivery is the receiver's idempotency key). Times come from `now()`, so a test clock
 * drives the whole schedule; `poll()` sends what is due and resolves when the results are in.
 */
import { randomUUID } from 'node:crypto';
import { uuidv7 } from 'uuidv7';
import type { AttemptRecord, ClaimedDelivery, WebhooksRepository } from '../db/webhooks-repository.js';
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

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { repository, sender } = options;
  const now = options.now ?? (() => new Date());
  const wallClock = options.wallClock ?? (() => new Date());
  const newId = options.newId ?? uuidv7;
  const concurrency = options.concurrency ?? 64;
  const timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  const onError = options.onError ?? (() => {});

  const record = createBatcher(async (events: WeirEvent[]) => {
    await repository.recordEvents(
      events.map((event) => {
        const body = eventBody(event, newId());
        return {
          ...filterValues(event),
          event_id: body.id,
          event_type: event.type,
          body: JSON.stringify(body),
          created_at: now(),
        };
      }),
    );
    return events.map(() => undefined);
  });
  const writeOutcome = createBatcher(async (records: AttemptRecord[]) => {
    await repository.recordOutcomes(records);
    return records.map(() => undefined);
  });

  const recording = new Set<Promise<void>>();
  const inFlight = new Set<Promise<void>>();
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

  async function attempt(row: ClaimedDelivery): Promise<void> {
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
    await writeOutcome({
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
  }

  function launch(row: ClaimedDelivery): void {
    const running = attempt(row).catch((error) =>
      // The lease runs out and the row is taken again: nothing is lost.
      onError(error, `webhook delivery ${row.delivery_id}: result not recorded`),
    );
    inFlight.add(running);
    void running.finally(() => inFlight.delete(running));
  }

  // Slots are refilled a quarter at a time, so a busy pump costs one claim per several
  // deliveries rather than one per delivery.
  const refill = Math.max(1, Math.floor(concurrency / 4));

  async function pump(): Promise<number> {
    let sent = 0;
    for (;;) {
      const free = concurrency - inFlight.size;
      if (free >= refill || inFlight.size === 0) {
        const at = now();
        const claimed = await repository.claimDue({
          now: at,
          limit: free,
          token: randomUUID(),
          leaseUntil: new Date(at.getTime() + timeoutMs + LEASE_MARGIN_MS),
        });
        for (const row of claimed) launch(row);
        sent += claimed.length;
        if (claimed.length === free) continue;
      }
      if (inFlight.size === 0) return sent;
      // Slots are full, or nothing is due while attempts run: go again when one finishes
      // (its retry may already be due under a test clock, or new rows may have arrived).
      await Promise.race(inFlight);
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

  function wake(): void {
    if (!stopped && timer) setImmediate(() => void kick());
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
