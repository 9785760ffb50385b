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
import type { EventBus } from '../events/event-bus.js';
import { stageMetrics } from '../metrics/metrics.js';
import type { ObjectStore } from '../storage/object-store.js';
import { inMessageSpan, recordMessageOutcome, tracingEnabled } from '../tracing/tracing.js';
import { runAdapterWithRetries } from './adapter-retries.js';
import { createBatchCollector } from './batch-collector.js';
import { decodeEnvelopeInline, type Envelope, isPayloadReference, rehydratePayload } from './envelope.js';
import { type ExecutionPlan, queueName, type StagePlan } from './execution-plan.js';
import { type ProcessorRun, processEnvelope } from './message-processing.js';
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

export { EARLY_OUTPUT_CHUNK, MAX_DELIVERIES, REPUBLISHED_HEADER } from './message-processing.js';

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
      let envelope: Envelope;
      try {
        envelope = decodeEnvelopeInline(message.body);
        if (isPayloadReference(envelope.payload)) await rehydratePayload(envelope, storage);
      } catch (error) {
        // Cannot be attributed to a lineage row: report it and drop it rather than loop on it.
        dependencies.onError(error, `undecodable message on ${stage.routeId}/${stage.name}`);
        await message.ack();
        return;
      }
      // Without tracing, no span and no frame around it: this runs for every message.
      if (!tracingEnabled()) await processEnvelope(run, message, envelope);
      else {
        const attributes = { message_id: envelope.message_id, execution_id: executionId, ...spanLabels };
        await inMessageSpan(envelope.traceparent, attributes, () => processEnvelope(run, message, envelope));
      }
    } finally {
      inFlight--;
      metrics.inFlight(-1);
    }
  }

  /**
   * Runs the adapter on `payload` with the retry policy, in one of the stage's `concurrency`
   * slots (a batch takes one). `envelope` is the message the context describes (for a batch,
   * its first message).
   */
  function runAdapter(payload: Record<string, unknown>, envelope: Envelope): Promise<AdapterResult> {
    return adapterSlots.run(() => runAdapterInSlot(payload, envelope));
  }

  /**
   * runAdapter once the call has its slot (a batch stage's collector takes the slot itself).
   * Not an async function: each message's call went through one more frame and promise.
   */
  function runAdapterInSlot(payload: Record<string, unknown>, envelope: Envelope): Promise<AdapterResult> {
    // A held message may have waited for its slot: a pause or a stop of the route made
    // meanwhile applies to it as to a message just received.
    if (gate) return gate.promise.then(() => runAdapterInSlot(payload, envelope));
    if (mode === 'skipping') return Promise.resolve({ skipped: ROUTE_STOPPED, attempts: 0 });
    // Cancelled meanwhile: not recorded (the caller acks it as it is), so not run either.
    if (signal.aborted) return Promise.resolve({ error: 'execution cancelled', attempts: 0 });
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
