/**
 * Writing the dispatcher's results (see dispatcher.ts): a journalled delivery's first row, in
 * its state after the first attempt (or unsent), and a claimed row's outcome, each in
 * group-committed batches.
 */
import type { AttemptRecord, FirstResult, WebhooksRepository } from '../db/webhooks-repository.js';
import { createGroupWriter } from '../runtime/batcher.js';
import type { DispatchState, FirstWrite, Journalled } from './dispatch-state.js';
import { nextStep } from './retry-policy.js';
import type { SendResult } from './sender.js';
import type { SubscriptionView } from './subscription-view.js';

/** What an attempt (or its absence) decides about a delivery's row. */
type FirstResultState =
  | 'status'
  | 'attempts'
  | 'next_attempt_at'
  | 'response_status'
  | 'response_snippet'
  | 'error'
  | 'attempted_at';

/**
 * First results gather for up to 100 ms into batches of up to 1,000 rows while at least 16
 * attempts are in flight or waiting: the slots are free already, and each statement costs
 * PGlite about as much CPU as 100 rows (about 3 ms and 30 us a row: 92 us a delivery in
 * batches of 50, 57 in batches of 125, 35 in batches of 500; docs/benchmarks.md).
 */
const RESULTS_BATCH = 1000;
const RESULTS_LINGER = { ms: 100, below: RESULTS_BATCH };
const RESULTS_LINGER_WHILE = 16;

export interface ResultWriters {
  /** Queues a journalled delivery's first row. */
  first(write: FirstWrite): void;
  /** Queues a claimed row's outcome (written while its lease holds). */
  outcome(record: AttemptRecord): void;
  /** True while results wait or are being written. */
  busy(): boolean;
  /** Resolves once every result queued so far (and meanwhile) is written. */
  idle(): Promise<void>;
}

export function createResultWriters(options: {
  repository: WebhooksRepository;
  state: DispatchState;
  subscriptions: SubscriptionView;
  onError: (error: unknown, message: string) => void;
}): ResultWriters {
  const { repository, state, onError } = options;
  // A journalled delivery's first row, in group-committed batches. The deliveries of
  // subscriptions deleted meanwhile get no row, and pending ones of disabled subscriptions are
  // parked, as of the subscriptions the write is checked against; the journal rows whose
  // deliveries have all been handed over go in the same statement.
  const firstResults = createGroupWriter<FirstWrite>(
    (writes) => writeFirstResults(writes, repository, options.subscriptions, onError),
    RESULTS_BATCH,
    {
      // Only while enough attempts are under way to fill a batch soon.
      linger: { ...RESULTS_LINGER, when: () => state.inFlight + state.ready.size >= RESULTS_LINGER_WHILE },
      onError: lostBatch(onError, 'first results'),
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
    { onError: lostBatch(onError, 'outcomes') },
  );
  const busy = () => firstResults.busy || outcomes.busy;
  return {
    first: (write) => firstResults.add(write),
    outcome: (record) => outcomes.add(record),
    busy,
    async idle() {
      while (busy()) {
        await firstResults.idle();
        await outcomes.idle();
      }
    },
  };
}

/** Writes a batch of first rows, checked against the current subscriptions (read again while they change). */
async function writeFirstResults(
  writes: FirstWrite[],
  repository: WebhooksRepository,
  subscriptionView: SubscriptionView,
  onError: (error: unknown, message: string) => void,
): Promise<void> {
  const finished: string[] = [];
  for (const write of writes) {
    write.lease.handedOver++;
    if (write.lease.handedOver === write.lease.size && !write.lease.broken)
      finished.push(write.lease.batchId);
  }
  try {
    for (;;) {
      const subscriptions = await subscriptionView.current();
      const records: FirstResult[] = [];
      for (const { record } of writes) {
        const subscription = subscriptions.byId.get(record.webhook_id);
        if (!subscription) continue;
        const waiting = record.status === 'pending' || record.status === 'pending_retry';
        records.push(waiting && !subscription.enabled ? { ...record, next_attempt_at: null } : record);
      }
      if (await repository.writeFirstResults(records, finished, subscriptions.version)) return;
      await subscriptionView.reload();
    }
  } catch (error) {
    // Their journal rows stay, run out, and become pending rows: nothing is lost (the ones
    // that were delivered may be sent again).
    for (const write of writes) write.lease.broken = true;
    onError(error, `results of ${writes.length} webhook deliveries not recorded`);
  }
}

/**
 * A journalled delivery's first row, with its state after the first attempt (or none). Field
 * by field rather than spread: one shape for every record, built once per delivery.
 */
export function firstWrite(item: Journalled, state: Pick<FirstResult, FirstResultState>): FirstWrite {
  return {
    lease: item.lease,
    record: {
      delivery_id: item.delivery_id,
      webhook_id: item.webhook_id,
      event_id: item.event_id,
      event_type: item.event_type,
      body: item.body,
      created_at: item.created_at,
      status: state.status,
      attempts: state.attempts,
      next_attempt_at: state.next_attempt_at,
      response_status: state.response_status,
      response_snippet: state.response_snippet,
      error: state.error,
      attempted_at: state.attempted_at,
    },
  };
}

/** A journalled delivery written unsent: due `at` (parked if its subscription is disabled). */
export function unsent(item: Journalled, at: Date): FirstWrite {
  return firstWrite(item, {
    status: 'pending',
    attempts: 0,
    next_attempt_at: at,
    response_status: null,
    response_snippet: null,
    error: null,
    attempted_at: null,
  });
}

/** What the retry policy makes of an answer at `at`, after `attempts` attempts. */
export function attemptResult(attempts: number, result: SendResult, at: Date) {
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

/** Each writer reports its own failures; a batch that throws past that is still reported. */
export function lostBatch(onError: (error: unknown, message: string) => void, what: string) {
  return (error: unknown, inputs: number) =>
    onError(error, `a batch of ${inputs} ${what} could not be written and was dropped`);
}
