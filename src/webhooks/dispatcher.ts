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
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { uuidv7 } from 'uuidv7';
import { outboxKeyText } from '../db/webhook-journal.js';
import { outboxKeyOf } from '../db/webhook-outbox.js';
import type {
  AttemptRecord,
  ClaimedDelivery,
  EventToRecord,
  FirstResult,
  WebhooksRepository,
} from '../db/webhooks-repository.js';
import { createGroupWriter } from '../engine/batcher.js';
import type { EventBus, WeirEvent } from '../events/event-bus.js';
import { recordWebhookAttempt } from '../metrics/metrics.js';
import { eventBody, filterValues } from './event-body.js';
import { createFifo } from './fifo.js';
import { ATTEMPT_TIMEOUT_MS, nextStep } from './retry-policy.js';
import type { Sender, SendResult } from './sender.js';
import { createSigner, type Signatures, type Signer } from './signer.js';
import { createMatcher } from './subscription-matching.js';
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

/** One journal row's deliveries, as this dispatcher holds them. */
interface JournalLease {
  batchId: string;
  /** Lease end on the schedule clock (ms). */
  until: number;
  /** Deliveries of the batch; `handedOver` counts those given to the first-results writer. */
  size: number;
  handedOver: number;
  /** A write of one of its deliveries failed: the journal row is left to run out and be expanded. */
  broken: boolean;
}

/** An event to record, its body encoded once (journal, row and POST use the bytes). */
type RecordedEvent = EventToRecord & { body: Buffer };

/** A journalled delivery waiting in memory for a slot. */
interface Journalled {
  lease: JournalLease;
  delivery_id: string;
  webhook_id: string;
  url: string;
  secret: string;
  event_id: string;
  event_type: string;
  /** UTF-8 bytes, encoded once for the journal, the row and the POST. */
  body: Uint8Array;
  created_at: Date;
  /** The subscriptions' version it was matched with. */
  version: number;
  /** Its signatures, once the signing thread has made them. */
  signed?: Signatures | undefined;
}

/** What an attempt (or its absence) decides about a delivery's row. */
type FirstResultState =
  | 'status'
  | 'attempts'
  | 'next_attempt_at'
  | 'response_status'
  | 'response_snippet'
  | 'error'
  | 'attempted_at';

/** A journalled delivery's first row, and the lease it belongs to. */
interface FirstWrite {
  lease: JournalLease;
  record: FirstResult;
}

/** Extra lease time beyond the attempt timeout, for writing the result back. */
const LEASE_MARGIN_MS = 60_000;
/** What a journalled delivery's lease must still cover beyond the attempt timeout to be sent. */
const RESULT_MARGIN_MS = 10_000;
/** Journalled deliveries, per slot, that may wait in memory for a free slot. */
const READY_PER_SLOT = 256;
/** Writes of a batch of events before its deliveries are given up, and the first wait between. */
const RECORD_ATTEMPTS = 5;
const RECORD_RETRY_MS = 100;
/** How long the dispatcher trusts its view of the subscriptions when sending. */
const SUBSCRIPTIONS_MAX_AGE_MS = 1000;
/**
 * First results gather for up to 20 ms into batches of up to 1,000 rows while at least 16
 * attempts are in flight or waiting: each statement costs PGlite as much as tens of rows, and
 * the slots are free already (docs/benchmarks.md).
 */
const RESULTS_BATCH = 1000;
const RESULTS_LINGER = { ms: 20, below: RESULTS_BATCH };
const RESULTS_LINGER_WHILE = 16;
/** How often due rows are claimed (at least) while journalled deliveries wait for slots. */
const CLAIM_WHILE_READY_MS = 100;
/** Journalled batches this big or bigger are signed on the signing thread (signer.ts). */
const SIGN_IN_THREAD_FROM = 32;
/** How old signatures made ahead may be when the delivery goes out (webhook-timestamp). */
const SIGNED_MAX_AGE_S = 30;
/** How often (at most) the pump looks for journal rows and outbox rows whose dispatcher died. */
const EXPAND_EVERY_MS = 1000;
/**
 * How old an outbox row must be before a sweep records it: the instance that raised the event
 * records it within milliseconds, so a row this old was left behind.
 */
const OUTBOX_GRACE_MS = 30_000;
/** How long a sweep's mark stays: far past any recording by the instance that raised the event. */
const OUTBOX_MARK_KEPT_MS = 3_600_000;
/** Outbox rows recorded per sweep statement. */
const OUTBOX_SWEEP_BATCH = 500;

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { repository, sender } = options;
  const now = options.now ?? (() => new Date());
  const wallClock = options.wallClock ?? (() => new Date());
  const newId = options.newId ?? uuidv7;
  const concurrency = options.concurrency ?? 64;
  const timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  // Without a logger the failures still show on stderr: dropped deliveries are never silent.
  const onError = options.onError ?? ((error: unknown, message: string) => console.error(message, error));
  const signer =
    options.signer ??
    createSigner((error) => onError(error, 'webhook signing thread failed: signing on the service thread'));

  const ready = createFifo<Journalled>();
  const readyLimit = concurrency * READY_PER_SLOT;
  const leaseLength = () => timeoutMs + LEASE_MARGIN_MS;

  // The subscriptions as last read, with their version.
  const subscriptionView = createSubscriptionView(() => repository.subscriptionSnapshot());
  const reloadSubscriptions = () => subscriptionView.reload();
  const currentSubscriptions = () => subscriptionView.current();

  // ---- Recording. ----
  // Events become journal rows (or pending rows) in group-committed batches (no promise per
  // event). A batch the database refuses is tried again a few times (a restarting database, a
  // lost connection) before its deliveries are given up and reported. Delivery ids stay the
  // same across attempts, so should a write that seemed to fail have landed after all, its
  // journal row's deliveries become rows only once (the ids clash) when it runs out.
  const recorder = createGroupWriter<WeirEvent>(
    async (events) => {
      const rows = eventRows(events);
      const deliveryIds = new Map<string, string>();
      for (let attempt = 1; ; attempt++) {
        try {
          await record(rows, deliveryIds);
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
    },
    undefined,
    { onError: lostBatch('recorded events') },
  );
  /** Each writer reports its own failures; one that throws past that is still logged. */
  function lostBatch(what: string) {
    return (error: unknown, inputs: number) =>
      onError(error, `a batch of ${inputs} ${what} could not be written and was dropped`);
  }
  function eventRows(events: WeirEvent[]): RecordedEvent[] {
    const at = now();
    const rows: RecordedEvent[] = new Array(events.length);
    for (let index = 0; index < events.length; index++) {
      const event = events[index] as WeirEvent;
      const filters = filterValues(event);
      const eventId = newId();
      rows[index] = {
        event_id: eventId,
        event_type: event.type,
        body: Buffer.from(JSON.stringify(eventBody(event, eventId)), 'utf8'),
        created_at: at,
        config_id: filters.config_id,
        execution_id: filters.execution_id,
        route_id: filters.route_id,
        adapter_name: filters.adapter_name,
        outbox_subject: outboxKeyOf(event)?.subject_id,
      };
    }
    return rows;
  }
  async function record(rows: RecordedEvent[], deliveryIds: Map<string, string>): Promise<void> {
    // Journalled only what this dispatcher can send soon; the rest waits as pending rows.
    const room = timer && !stopped ? Math.max(0, readyLimit - ready.size) : 0;
    if (room < rows.length) {
      await repository.recordEvents(rows.slice(room));
      if (room === 0) return;
      rows = rows.slice(0, room);
    }
    for (;;) {
      const subscriptions = await currentSubscriptions();
      const match = createMatcher(subscriptions.subscriptions);
      const lease: JournalLease = {
        batchId: randomUUID(),
        until: now().getTime() + leaseLength(),
        size: 0,
        handedOver: 0,
        broken: false,
      };
      const items: Journalled[] = [];
      for (const row of rows) {
        for (const subscription of match(row)) {
          const pair = `${row.event_id}/${subscription.webhook_id}`;
          let deliveryId = deliveryIds.get(pair);
          if (!deliveryId) {
            deliveryId = newId();
            deliveryIds.set(pair, deliveryId);
          }
          items.push({
            lease,
            delivery_id: deliveryId,
            webhook_id: subscription.webhook_id,
            url: subscription.url,
            secret: subscription.secret,
            event_id: row.event_id,
            event_type: row.event_type,
            body: row.body,
            created_at: row.created_at,
            version: subscriptions.version,
          });
        }
      }
      const withDeliveries = new Set(items.map((item) => item.event_id));
      const write = await repository.journalDeliveries(
        {
          batchId: lease.batchId,
          token: lease.batchId,
          until: new Date(lease.until),
          createdAt: rows[0]?.created_at ?? now(),
          deliveryIds: items.map((item) => item.delivery_id),
          webhookIds: items.map((item) => item.webhook_id),
          eventIds: items.map((item) => item.event_id),
          eventTypes: items.map((item) => item.event_type),
          bodies: items.map((item) => item.body),
          outbox: outboxKeys(rows, withDeliveries),
        },
        subscriptions.version,
      );
      if (!write.versionCurrent) {
        // The subscriptions changed since they were read: read them and match again.
        await reloadSubscriptions();
        continue;
      }
      if (!write.written) {
        // A sweep recorded some of them already (this instance took too long): the rest only.
        rows = rows.filter((row) => !row.outbox_subject || !write.recordedElsewhere.has(outboxText(row)));
        continue;
      }
      lease.size = items.length;
      for (const item of items) ready.push(item);
      if (items.length >= SIGN_IN_THREAD_FROM) signAhead(items);
      return;
    }
  }

  /** Has the signing thread sign a batch while it waits for slots (see signer.ts). */
  function signAhead(items: Journalled[]): void {
    const seconds = Math.floor(wallClock().getTime() / 1000);
    signer
      .sign(
        items.map((item) => ({ deliveryId: item.delivery_id, secret: item.secret, body: item.body })),
        seconds,
      )
      .then(
        (signatures) => {
          if (!signatures) return;
          for (let index = 0; index < items.length; index++)
            (items[index] as Journalled).signed = signatures[index];
        },
        (error) => onError(error, 'webhook signing thread failed: signing on the service thread'),
      );
  }

  // ---- Writing results. ----
  // A journalled delivery's first row, in group-committed batches. The deliveries of
  // subscriptions deleted meanwhile get no row, and pending ones of disabled subscriptions are
  // parked, as of the subscriptions the write is checked against; the journal rows whose
  // deliveries have all been handed over go in the same statement.
  const firstResults = createGroupWriter<FirstWrite>(
    async (writes) => {
      const finished: string[] = [];
      for (const write of writes) {
        write.lease.handedOver++;
        if (write.lease.handedOver === write.lease.size && !write.lease.broken)
          finished.push(write.lease.batchId);
      }
      try {
        for (;;) {
          const subscriptions = await currentSubscriptions();
          const records: FirstResult[] = [];
          for (const { record } of writes) {
            const subscription = subscriptions.byId.get(record.webhook_id);
            if (!subscription) continue;
            const waiting = record.status === 'pending' || record.status === 'pending_retry';
            records.push(waiting && !subscription.enabled ? { ...record, next_attempt_at: null } : record);
          }
          if (await repository.writeFirstResults(records, finished, subscriptions.version)) return;
          await reloadSubscriptions();
        }
      } catch (error) {
        // Their journal rows stay, run out, and become pending rows: nothing is lost (the ones
        // that were delivered may be sent again).
        for (const write of writes) write.lease.broken = true;
        onError(error, `results of ${writes.length} webhook deliveries not recorded`);
      }
    },
    RESULTS_BATCH,
    {
      // Only while enough attempts are under way to fill a batch soon.
      linger: { ...RESULTS_LINGER, when: () => inFlight + ready.size >= RESULTS_LINGER_WHILE },
      onError: lostBatch('first results'),
    },
  );
  // Results of claimed rows: written back while the lease holds.
  const outcomes = createGroupWriter<AttemptRecord>(
    async (records) => {
      try {
        await repository.recordOutcomes(records);
      } catch (error) {
        // The leases run out and the rows are taken again: nothing is lost.
        onError(error, `results of ${records.length} webhook deliveries not recorded`);
      }
    },
    undefined,
    { onError: lostBatch('outcomes') },
  );
  const resultsBusy = () => firstResults.busy || outcomes.busy;
  const resultsIdle = async () => {
    while (resultsBusy()) {
      await firstResults.idle();
      await outcomes.idle();
    }
  };

  /** A journalled delivery's first row, with its state after the first attempt (or none). */
  function firstWrite(item: Journalled, state: Pick<FirstResult, FirstResultState>): FirstWrite {
    return {
      lease: item.lease,
      record: {
        delivery_id: item.delivery_id,
        webhook_id: item.webhook_id,
        event_id: item.event_id,
        event_type: item.event_type,
        body: item.body,
        created_at: item.created_at,
        ...state,
      },
    };
  }

  /** A journalled delivery written unsent: due now (parked if its subscription is disabled). */
  function unsent(item: Journalled): FirstWrite {
    return firstWrite(item, {
      status: 'pending',
      attempts: 0,
      next_attempt_at: now(),
      response_status: null,
      response_snippet: null,
      error: null,
      attempted_at: null,
    });
  }

  // ---- Sending. ----
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
  let lastExpansion = 0;
  let lastClaim = 0;

  if (options.events) unsubscribe = options.events.subscribe((event) => recorder.add(event));

  /** What the retry policy makes of an answer, after `attempts` attempts. */
  function attemptResult(attempts: number, result: SendResult) {
    const at = now();
    const step = nextStep(attempts, result.outcome, at);
    const status = result.outcome.kind === 'response' ? result.outcome.status : null;
    return {
      status: step.status,
      attempts,
      next_attempt_at: step.nextRetryAt,
      response_status: status,
      response_snippet: result.snippet,
      error: result.error ?? (step.status === 'delivered' ? null : `HTTP ${status}`),
      attempted_at: at,
    };
  }

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
    inFlight++;
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
      inFlight--;
      const wakePump = slotFreed;
      slotFreed = undefined;
      wakePump?.();
      if (inFlight === 0 && allSettled.length > 0) for (const settled of allSettled.splice(0)) settled();
    }
  }

  function launchJournalled(item: Journalled): void {
    // Signatures made ahead serve while fresh and made with the secret it is sent with.
    const signed = item.signed;
    if (
      signed &&
      (signed.secret !== item.secret ||
        Math.floor(wallClock().getTime() / 1000) - signed.seconds > SIGNED_MAX_AGE_S)
    )
      item.signed = undefined;
    void attempt(item, (result) => firstResults.add(firstWrite(item, attemptResult(1, result))));
  }

  function launchClaimed(row: ClaimedDelivery): void {
    void attempt(row, (result) => {
      outcomes.add({
        delivery_id: row.delivery_id,
        claim_token: row.claim_token as string,
        ...attemptResult(row.attempts + 1, result),
      });
    });
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

  /** Sends journalled deliveries into free slots; one whose lease could run out mid-attempt is written unsent. */
  function launchReady(): number {
    if (ready.size === 0) return 0;
    const snapshot = subscriptionView.latest();
    if (!snapshot || Date.now() - snapshot.loadedAt > SUBSCRIPTIONS_MAX_AGE_MS)
      reloadSubscriptions().catch((error) =>
        onError(error, 'webhook dispatcher: reading subscriptions failed'),
      );
    let launched = 0;
    while (inFlight < concurrency && ready.size > 0) {
      const item = ready.take() as Journalled;
      const leaseLeft = item.lease.until - now().getTime();
      if (leaseLeft < timeoutMs + RESULT_MARGIN_MS || verdict(item) === 'unsent') {
        firstResults.add(unsent(item));
        continue;
      }
      launchJournalled(item);
      launched++;
    }
    return launched;
  }

  // Slots are refilled a quarter at a time, so a busy pump costs one claim per several
  // deliveries rather than one per delivery.
  const refill = Math.max(1, Math.floor(concurrency / 4));

  /** Journal rows whose dispatcher died become pending rows (at most once a second, or when polled). */
  async function expandExpired(force: boolean): Promise<void> {
    if (!force && Date.now() - lastExpansion < EXPAND_EVERY_MS) return;
    lastExpansion = Date.now();
    while ((await repository.expandExpiredJournals(now())) > 0) {}
    await recordLeftBehind();
  }

  /**
   * Events whose outbox row is still there long after the change committed: the instance that
   * raised them died before recording them (or has no dispatcher). They become pending rows,
   * and their outbox rows are marked recorded, in one statement.
   */
  async function recordLeftBehind(): Promise<void> {
    const at = now().getTime();
    await repository.purgeRecorded(new Date(at - OUTBOX_MARK_KEPT_MS));
    for (;;) {
      const left = await repository.leftBehind(new Date(at - OUTBOX_GRACE_MS), OUTBOX_SWEEP_BATCH);
      if (left.length === 0) return;
      await repository.recordEvents(eventRows(left), { sweep: true });
      wake();
      if (left.length < OUTBOX_SWEEP_BATCH) return;
    }
  }

  async function pump(force: boolean): Promise<number> {
    let sent = 0;
    await expandExpired(force);
    for (;;) {
      sent += launchReady();
      const free = concurrency - inFlight;
      // While journalled deliveries wait, slots go to them: a claim is a round trip that would
      // leave freed slots empty meanwhile. Due rows are still claimed now and then.
      const claimTime = ready.size === 0 || Date.now() - lastClaim >= CLAIM_WHILE_READY_MS;
      if (claimTime && (free >= refill || inFlight === 0)) {
        lastClaim = Date.now();
        const at = now();
        const claimed = await repository.claimDue({
          now: at,
          limit: free,
          token: randomUUID(),
          leaseUntil: new Date(at.getTime() + leaseLength()),
        });
        for (const row of claimed) launchClaimed(row);
        sent += claimed.length;
        if (claimed.length === free) continue;
      }
      if (inFlight === 0) {
        if (!resultsBusy()) return sent;
        // Results are in only once written; then look again (a retry may be due already).
        await resultsIdle();
        continue;
      }
      // Slots are full, or nothing is due while attempts run: go again when one finishes
      // (its retry may already be due under a test clock, or new rows may have arrived).
      await nextFreeSlot();
    }
  }

  function kick(force = false): Promise<number> {
    if (pumping) {
      again = true;
      return pumping;
    }
    const run = pump(force)
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
    if (stopped || !timer) return;
    // A pump waiting for a slot goes round now (new deliveries may fit the free ones).
    const nudge = slotFreed;
    slotFreed = undefined;
    nudge?.();
    if (wakeQueued) return;
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
      // What was journalled and not sent becomes pending rows, for the next dispatcher.
      for (const item of ready.drain()) firstResults.add(unsent(item));
      await subscriptionView.settled();
      await resultsIdle();
      sender.close();
      signer.close();
    },
    async poll() {
      while (pumping) await pumping;
      return kick(true);
    },
    wake,
    async flush() {
      await recorder.idle();
    },
    subscriptionsChanged() {
      if (!stopped)
        reloadSubscriptions().catch((error) =>
          onError(error, 'webhook dispatcher: reading subscriptions failed'),
        );
    },
  };
}

/** The outbox rows of `rows`, each needed when one of its deliveries is in the batch. */
function outboxKeys(rows: readonly RecordedEvent[], withDeliveries: ReadonlySet<string>) {
  const keys: Array<{ event_type: string; subject_id: string; needed: boolean }> = [];
  for (const row of rows)
    if (row.outbox_subject)
      keys.push({
        event_type: row.event_type,
        subject_id: row.outbox_subject,
        needed: withDeliveries.has(row.event_id),
      });
  return keys;
}

function outboxText(row: RecordedEvent): string {
  return outboxKeyText({ event_type: row.event_type, subject_id: row.outbox_subject as string });
}
