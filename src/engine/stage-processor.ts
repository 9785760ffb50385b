/**
 * One processor per stage of a route of an execution: it consumes the stage's queue with at
 * most `concurrency` adapter calls at once (and more messages in hand, see heldMessages), runs
 * the adapter with the stage's retry policy, records the outcome and the outputs in one
 * transaction, publishes the outputs, and only then acknowledges the input (nothing is lost if
 * the process dies at any point in between).
 */

import type { AdapterHandler, AdapterOutput, AdapterResources, SyncState } from '../adapters/adapter.js';
import type { Broker, BrokerMessage, Subscription } from '../broker/broker.js';
import { ROUTE_STOPPED } from '../db/execution-outcome.js';
import type { AddOutcome, FinishOutcome, FinishRequest, NewMessage } from '../db/execution-types.js';
import type { EventBus, LineageFailedEvent } from '../events/event-bus.js';
import { stageMetrics } from '../metrics/metrics.js';
import type { ObjectStore } from '../storage/object-store.js';
import { inMessageSpan, recordMessageOutcome } from '../tracing/tracing.js';
import { runAdapterWithRetries } from './adapter-retries.js';
import { createBatchCollector } from './batch-collector.js';
import { decodeEnvelope, type Envelope } from './envelope.js';
import { type ExecutionPlan, queueName, type StagePlan } from './execution-plan.js';
import { inWindows, type PreparedOutputs, PUBLISH_WINDOW, prepareOutputs } from './outputs.js';
import { createSlots } from './slots.js';

export interface ProcessorDependencies {
  executionId: string;
  configId: string;
  plan: ExecutionPlan;
  stage: StagePlan;
  broker: Broker;
  storage: ObjectStore;
  /** Group-committed lineage writes and lookups, shared by every processor of the instance. */
  lineage: {
    isFinished(messageId: string): Promise<boolean>;
    finish(request: FinishRequest): Promise<FinishOutcome>;
    /** Queues outputs ahead of their parent's finish (running executions within budget only). */
    addOutputs(executionId: string, outputs: readonly NewMessage[], now: Date): Promise<AddOutcome>;
  };
  events: EventBus;
  resources: AdapterResources;
  now: () => Date;
  /** Aborted when the execution is cancelled or the processor stops. */
  signal: AbortSignal;
  onFinished: (outcome: FinishOutcome, failed?: boolean) => void;
  onReceived: () => void;
  /** Deliveries allowed to fail on infrastructure errors before the message is failed. */
  maxDeliveries?: number | undefined;
  onError: (error: unknown, context: string) => void;
}

/** run: consume normally; paused: not consuming (messages wait); skipping: route stopped. */
export type ProcessorMode = 'run' | 'paused' | 'skipping';

export interface StageProcessor {
  readonly stage: StagePlan;
  inFlight(): number;
  mode(): ProcessorMode;
  setMode(mode: ProcessorMode): Promise<void>;
  stop(): Promise<void>;
}

export type AdapterResult =
  | { outputs: AdapterOutput[]; attempts: number; batchId?: string }
  | { error: string; attempts: number }
  | { skipped: string; attempts: number };

/** Deliveries of one message that may fail on infrastructure errors before it is failed. */
export const MAX_DELIVERIES = 10;

/**
 * Outputs per early commit of a large fan-out. Without it, every output is written in the
 * parent's finish and the next stage sees none of them until the last is written.
 */
export const EARLY_OUTPUT_CHUNK = 2000;

/**
 * Messages a stage may hold beyond what its adapter calls take (`concurrency`, times the batch
 * size): finished ones waiting for their group-committed finish and ack, and the next ones
 * waiting for an adapter slot. Without them a message kept its slot until its finish was
 * durable: a stage ran at most `concurrency` messages per database commit (one, by default),
 * and the group commit was as small as the slots. Nothing is acked earlier than before: a
 * message is acknowledged once its finish and outputs are durable. At most three more windows
 * (at least SETTLING_FLOOR, at most 1,024 messages), so an instance with a slow stage does not
 * hoard a queue that other instances (or other consumers of an in-process broker) could be
 * taking from.
 */
export const SETTLING_MESSAGES = 1024;

/**
 * The least room a stage has for messages beyond its window, whatever its concurrency. The
 * time a message settles (its group-committed finish, its outputs' sends, its ack) does not
 * shrink with the window: on a PostgreSQL server with a STOMP broker it took 50-120 ms, so a
 * stage of concurrency 1 holding 4 messages passed at most 40-80 a second, however fast its
 * adapter (segment_publisher held the server path's ingestion to that). And a message's time
 * in hand before its call (its payload read back from the store) is thread-pool round trips
 * that lengthen with load: embedded, bench:ingest's html_to_markdown (4 slots, 20 held) kept
 * pages queued 4-11 s at load 6-17 with its slots mostly free. 64 lets such a stage pass
 * hundreds a second at 200 ms in hand; a stage of slow calls hoards at most 64 messages more
 * (a floor of 48 cost the same CPU as 16, docs/benchmarks.md).
 */
export const SETTLING_FLOOR = 64;

export function heldMessages(window: number): number {
  return window + Math.min(SETTLING_MESSAGES, Math.max(SETTLING_FLOOR, 3 * window));
}

/** Set on messages republished from the lineage outbox after a restart. */
export const REPUBLISHED_HEADER = 'x-weir-republished';

/** The skip reason of a stopped route's messages; outcomes count it as unexpected. */
export { ROUTE_STOPPED };

export async function startStageProcessor(dependencies: ProcessorDependencies): Promise<StageProcessor> {
  const { executionId, stage, broker, storage, lineage, signal } = dependencies;
  const syncState = dependencies.resources.syncStates?.(dependencies.configId, executionId) ?? noSyncState;
  const claims = dependencies.resources.executionClaims?.(executionId) ?? { claim: unavailable };
  const fanIn = dependencies.resources.executionFanIn?.(executionId) ?? { arrive: unavailable };
  const handler: AdapterHandler = stage.definition.create(stage.config as never, dependencies.resources);
  const adapterSlots = createSlots(stage.concurrency);
  let inFlight = 0;
  let mode: ProcessorMode = 'run';
  let stopped = false;
  let gate: { promise: Promise<void>; release: () => void } | undefined;
  const openGate = () => {
    const current = gate;
    gate = undefined;
    current?.release();
  };
  /** Deliveries of a message that failed for infrastructure reasons, by message id. */
  const infrastructureFailures = new Map<string, number>();
  const spanLabels = { route: stage.routeId, stage: stage.name, adapter: stage.type };
  const metrics = stageMetrics(spanLabels);

  const finish = (request: FinishRequest) => finishCounted(lineage, metrics, request);

  async function process(message: BrokerMessage): Promise<void> {
    inFlight++;
    metrics.inFlight(1);
    dependencies.onReceived();
    try {
      // Paused: hold the message unacknowledged. Once heldMessages() are held the broker
      // sends no more (prefetch), so the route stops without unsubscribing, which
      // behaves the same on every broker.
      while (gate) await gate.promise;
      if (stopped) return; // left unacknowledged: the broker gives it to the next consumer
      await processMessage(message);
    } finally {
      inFlight--;
      metrics.inFlight(-1);
    }
  }

  async function processMessage(message: BrokerMessage): Promise<void> {
    let envelope: Envelope;
    try {
      envelope = await decodeEnvelope(message.body, storage);
    } catch (error) {
      // Cannot be attributed to a lineage row: report it and drop it rather than loop on it.
      dependencies.onError(error, `undecodable message on ${stage.routeId}/${stage.name}`);
      await message.ack();
      return;
    }
    const spanAttributes = { message_id: envelope.message_id, execution_id: executionId, ...spanLabels };
    await inMessageSpan(envelope.traceparent, spanAttributes, () => processEnvelope(run, message, envelope));
  }

  /**
   * Runs the adapter on `payload` with the retry policy, in one of the stage's `concurrency`
   * slots (a batch takes one). `envelope` is the message the context describes (for a batch,
   * its first message).
   */
  function runAdapter(payload: Record<string, unknown>, envelope: Envelope): Promise<AdapterResult> {
    return adapterSlots.run(() => runAdapterInSlot(payload, envelope));
  }

  /** runAdapter once the call has its slot (a batch stage's collector takes the slot itself). */
  async function runAdapterInSlot(
    payload: Record<string, unknown>,
    envelope: Envelope,
  ): Promise<AdapterResult> {
    // A held message may have waited for its slot: a pause or a stop of the route made
    // meanwhile applies to it as to a message just received.
    while (gate) await gate.promise;
    if (mode === 'skipping') return { skipped: ROUTE_STOPPED, attempts: 0 };
    // Cancelled meanwhile: not recorded (the caller acks it as it is), so not run either.
    if (signal.aborted) return { error: 'execution cancelled', attempts: 0 };
    return runAdapterWithRetries(dependencies, handler, { syncState, claims, fanIn }, payload, envelope);
  }

  /** A batch stage: one handler call for up to `size` messages, each answered with its share. */
  const collectBatch = stage.batch
    ? createBatchCollector<Envelope, AdapterResult>(
        stage.batch.size,
        stage.batch.max_wait_ms,
        async (envelopes) => {
          const batchId = dependencies.resources.newId();
          const payload = {
            batch_id: batchId,
            messages: envelopes.map((entry) => ({
              message_id: entry.message_id,
              correlation_id: entry.correlation_id,
              payload: entry.payload,
              metadata: entry.metadata,
            })),
          };
          const result = await runAdapterInSlot(payload, envelopes[0] as Envelope);
          if (!('outputs' in result)) return envelopes.map(() => result);
          return envelopes.map((_, index) => ({
            attempts: result.attempts,
            batchId,
            outputs: result.outputs.filter((output) => (output.batchIndex ?? 0) === index),
          }));
        },
        // The collector takes a slot for each batch, so a batch keeps filling while none is free.
        adapterSlots,
      )
    : undefined;

  const run: ProcessorRun = {
    dependencies,
    finish,
    runAdapter: (envelope) =>
      collectBatch ? collectBatch(envelope) : runAdapter(envelope.payload, envelope),
    mode: () => mode,
    infrastructureFailures,
  };

  let subscription: Subscription | undefined = await broker.subscribe(
    queueName(executionId, stage.routeId, stage.name),
    // A batch stage's adapter takes up to `concurrency` batches at once.
    { prefetch: heldMessages(stage.concurrency * (stage.batch?.size ?? 1)) },
    process,
  );

  return {
    stage,
    inFlight: () => inFlight,
    mode: () => mode,
    async setMode(next) {
      mode = next;
      if (next === 'paused') {
        if (!gate) {
          let release!: () => void;
          const promise = new Promise<void>((resolve) => {
            release = resolve;
          });
          gate = { promise, release };
        }
      } else {
        openGate();
      }
    },
    async stop() {
      stopped = true;
      openGate();
      const current = subscription;
      subscription = undefined;
      await current?.unsubscribe();
    },
  };
}

/** lineage.finish, counted in the metrics when it is applied (a duplicate finish is not). */
async function finishCounted(
  lineage: ProcessorDependencies['lineage'],
  metrics: ReturnType<typeof stageMetrics>,
  request: FinishRequest,
): Promise<FinishOutcome> {
  const outcome = await lineage.finish(request);
  recordMessageOutcome(request.status, request.error);
  if (outcome.applied) {
    const { started_at, finished_at } = request.message;
    metrics.finished(request.status, (finished_at.getTime() - started_at.getTime()) / 1000);
  }
  return outcome;
}

/** What processEnvelope needs of its processor: its dependencies, state and adapter runner. */
interface ProcessorRun {
  dependencies: ProcessorDependencies;
  /** lineage.finish, counted in the metrics. */
  finish: (request: FinishRequest) => Promise<FinishOutcome>;
  /** The adapter on one message: through the batch collector on a batch stage. */
  runAdapter: (envelope: Envelope) => Promise<AdapterResult>;
  mode: () => ProcessorMode;
  /** Deliveries of a message that failed for infrastructure reasons, by message id. */
  infrastructureFailures: Map<string, number>;
}

/** A decoded message, in its span: run the adapter, record the outcome, send the outputs. */
async function processEnvelope(run: ProcessorRun, message: BrokerMessage, envelope: Envelope): Promise<void> {
  const { dependencies, finish, infrastructureFailures } = run;
  const { executionId, stage, lineage, now, signal } = dependencies;
  try {
    // Only a message that may have been seen before (redelivered, or republished from the
    // outbox) is looked up; finishing is idempotent anyway, this only spares the handler.
    const maybeDuplicate = message.deliveryCount > 1 || message.headers[REPUBLISHED_HEADER] !== undefined;
    if (maybeDuplicate && (await lineage.isFinished(envelope.message_id))) {
      await message.ack(); // a duplicate delivery: already recorded
      return;
    }
    const startedAt = now();
    if (run.mode() === 'skipping') {
      // A stopped route drains: its messages are recorded as skipped so executions still end.
      const finished = {
        message_id: envelope.message_id,
        execution_id: executionId,
        started_at: startedAt,
        finished_at: now(),
        attempts: 0,
      };
      dependencies.onFinished(
        await finish({ message: finished, status: 'skipped', error: ROUTE_STOPPED, outputs: [] }),
      );
      await message.ack();
      return;
    }
    const maxDepth = dependencies.resources.settings.max_lineage_depth;
    const result: AdapterResult =
      (envelope.depth ?? 0) > maxDepth
        ? {
            error: `lineage depth ${envelope.depth} passes max_lineage_depth (${maxDepth}): do routes send messages round in a cycle?`,
            attempts: 0,
          }
        : await run.runAdapter(envelope);
    if (signal.aborted) {
      await message.ack(); // the execution was cancelled; its messages stay as they are
      return;
    }
    const finished = {
      message_id: envelope.message_id,
      execution_id: executionId,
      started_at: startedAt,
      finished_at: now(),
      attempts: result.attempts,
    };
    if ('skipped' in result) {
      dependencies.onFinished(
        await finish({ message: finished, status: 'skipped', error: result.skipped, outputs: [] }),
      );
    } else if ('error' in result) {
      const failedEvent = lineageFailed(dependencies, envelope, result.error);
      const outcome = await finish({
        message: finished,
        status: 'failed',
        error: result.error,
        outputs: [],
        failedEvent,
      });
      if (outcome.applied) dependencies.events.emit(failedEvent);
      dependencies.onFinished(outcome, true);
    } else {
      await queueOutputsAndFinish(dependencies, envelope, result, finished, finish);
    }
    if (infrastructureFailures.size > 0) infrastructureFailures.delete(envelope.message_id);
    await message.ack();
  } catch (error) {
    // The database or broker failed us: give the message back (redelivered after a back-off),
    // a bounded number of times; then record it as failed rather than cycle for ever.
    dependencies.onError(error, `processing ${envelope.message_id} on ${stage.routeId}/${stage.name}`);
    const failures = (infrastructureFailures.get(envelope.message_id) ?? 0) + 1;
    infrastructureFailures.set(envelope.message_id, failures);
    if (failures < (dependencies.maxDeliveries ?? MAX_DELIVERIES)) {
      await message.nack();
      return;
    }
    infrastructureFailures.delete(envelope.message_id);
    const reason = `gave up after ${failures} deliveries: ${(error as Error).message}`;
    try {
      const at = now();
      const finished = {
        message_id: envelope.message_id,
        execution_id: executionId,
        started_at: at,
        finished_at: at,
        attempts: failures,
      };
      const failedEvent = lineageFailed(dependencies, envelope, reason);
      const outcome = await finish({
        message: finished,
        status: 'failed',
        error: reason,
        outputs: [],
        failedEvent,
      });
      if (outcome.applied) dependencies.events.emit(failedEvent);
      dependencies.onFinished(outcome, true);
      await message.ack();
    } catch {
      await message.nack(); // not even the failure can be recorded: keep the message
    }
  }
}

/**
 * A completed message's outputs queued in lineage with its finish, counted, then sent. A large
 * fan-out is prepared, queued and sent in chunks before the finish, so the next stage starts
 * while the rest is written, and one chunk is sent while the next is prepared and written. The
 * parent stays queued (and the execution pending) until its finish; run again after a crash, it
 * re-inserts and resends none of the outputs already queued (their ids derive from the
 * parent's). Past the execution's message budget, no further output is queued.
 */
async function queueOutputsAndFinish(
  dependencies: ProcessorDependencies,
  envelope: Envelope,
  result: Extract<AdapterResult, { outputs: AdapterOutput[] }>,
  finished: FinishRequest['message'],
  finish: (request: FinishRequest) => Promise<FinishOutcome>,
): Promise<void> {
  // Nothing to queue or send (a terminal stage's message): the finish alone, without the
  // preparing and publishing machinery, which cost a sink's every message its garbage.
  if (result.outputs.length === 0) {
    dependencies.onFinished(
      await finish({ message: finished, status: 'completed', error: null, outputs: [] }),
    );
    return;
  }
  const { stage, executionId, storage, now, lineage, broker, signal } = dependencies;
  const outputsContext = { plan: dependencies.plan, stage, executionId, storage, now };
  const prepare = (start: number, end: number) =>
    prepareOutputs(outputsContext, envelope, result.outputs, result.batchId, { start, end });
  const publishInserted = async (prepared: PreparedOutputs, insertedIds: readonly string[]) => {
    const inserted = new Set(insertedIds);
    const sends: Array<() => Promise<void>> = [];
    prepared.messages.forEach((output, index) => {
      if (inserted.has(output.message_id))
        sends.push(() => broker.publish(prepared.queues[index] as string, output.envelope));
    });
    await inWindows(sends, PUBLISH_WINDOW);
  };
  let early = 0;
  let overBudget = false;
  let publishing: Promise<void> = Promise.resolve();
  while (result.outputs.length - early > EARLY_OUTPUT_CHUNK && !signal.aborted) {
    const chunk = await prepare(early, early + EARLY_OUTPUT_CHUNK);
    const added = await lineage.addOutputs(executionId, chunk.messages, now());
    if (added.failedExecution) {
      // Past the execution's message budget: it has failed, and no further output is queued.
      dependencies.onFinished({
        applied: false,
        inserted: [],
        finishedExecution: added.failedExecution,
      });
      overBudget = true;
      break;
    }
    await publishing;
    publishing = publishInserted(chunk, added.inserted);
    // Awaited before the next chunk's sends; meanwhile a failure must not count as unhandled.
    publishing.catch(() => {});
    early += EARLY_OUTPUT_CHUNK;
  }
  const rest = await prepare(early, overBudget ? early : result.outputs.length);
  const outcome = await finish({
    message: finished,
    status: 'completed',
    error: null,
    outputs: rest.messages,
  });
  // Counted once applied, as finishCounted counts it: the outputs' own finishes, and so the
  // execution's end, can come before these sends' receipts do.
  dependencies.onFinished(outcome);
  await publishing;
  await publishInserted(rest, outcome.inserted);
}

/**
 * The event of a failed message: kept in the webhook outbox by the finish that records the
 * failure, and raised on the bus once that finish is applied.
 */
function lineageFailed(
  dependencies: ProcessorDependencies,
  envelope: Envelope,
  error: string,
): LineageFailedEvent {
  const { stage, executionId, now } = dependencies;
  return {
    type: 'lineage.failed',
    execution_id: executionId,
    config_id: dependencies.configId,
    route_id: stage.routeId,
    adapter_name: stage.type,
    message_id: envelope.message_id,
    correlation_id: envelope.correlation_id,
    error,
    timestamp: now().toISOString(),
  };
}

/** Where the engine was built without a database for sync state (some tests): a clear failure. */
const noSyncState: SyncState = {
  settled: unavailable,
  all: unavailable,
  put: unavailable,
  remove: unavailable,
};

async function unavailable(): Promise<never> {
  throw new Error('this engine keeps no sync state, claims or fan-in (built without createEngine)');
}
