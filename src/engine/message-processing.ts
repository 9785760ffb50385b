/**
 * One decoded message of a stage processor (stage-processor.ts): a duplicate delivery acked,
 * the adapter run, the outcome recorded with its outputs, the outputs sent, the input acked;
 * a database or broker failure gives the message back, a bounded number of times.
 *
 * The path every message takes (its adapter answered, nothing or outputs to send) stays in
 * processEnvelope, and each rare one (a duplicate, a stopped route, a failure, an
 * infrastructure error) is a function of its own: an async function's frame holds a register
 * for every local of every branch, and it is allocated for each message.
 */
import type { AdapterOutput } from '../adapters/adapter.js';
import type { BrokerMessage } from '../broker/broker.js';
import { ROUTE_STOPPED } from '../db/execution-outcome.js';
import type { FinishedMessage, FinishOutcome, FinishRequest } from '../db/execution-types.js';
import type { LineageFailedEvent } from '../events/event-bus.js';
import type { Envelope } from './envelope.js';
import { inWindows, type PreparedOutputs, PUBLISH_WINDOW, prepareOutputs } from './outputs.js';
import type { AdapterResult, ProcessorDependencies, ProcessorMode } from './stage-processor.js';

/** Deliveries of one message that may fail on infrastructure errors before it is failed. */
export const MAX_DELIVERIES = 10;

/**
 * Outputs per early commit of a large fan-out. Without it, every output is written in the
 * parent's finish and the next stage sees none of them until the last is written.
 */
export const EARLY_OUTPUT_CHUNK = 2000;

/** Set on messages republished from the lineage outbox after a restart. */
export const REPUBLISHED_HEADER = 'x-weir-republished';

/** What processEnvelope needs of its processor: its dependencies, state and adapter runner. */
export interface ProcessorRun {
  dependencies: ProcessorDependencies;
  /** lineage.finish, counted in the metrics. */
  finish: (request: FinishRequest) => Promise<FinishOutcome>;
  /** The adapter on one message: through the batch collector on a batch stage. */
  runAdapter: (envelope: Envelope) => Promise<AdapterResult>;
  mode: () => ProcessorMode;
  /** Deliveries of a message that failed for infrastructure reasons, by message id. */
  infrastructureFailures: Map<string, number>;
}

/** The outputs of a message that has none: one array for all of them (finishes only read it). */
const NO_OUTPUTS: readonly never[] = Object.freeze([]);

/** A decoded message, in its span: run the adapter, record the outcome, send the outputs. */
export async function processEnvelope(
  run: ProcessorRun,
  message: BrokerMessage,
  envelope: Envelope,
): Promise<void> {
  const { dependencies } = run;
  try {
    // Only a message that may have been seen before (redelivered, or republished from the
    // outbox) is looked up; finishing is idempotent anyway, this only spares the handler.
    const maybeDuplicate = message.deliveryCount > 1 || message.headers[REPUBLISHED_HEADER] !== undefined;
    if (maybeDuplicate && (await dependencies.lineage.isFinished(envelope.message_id))) {
      await message.ack(); // a duplicate delivery: already recorded
      return;
    }
    const startedAt = dependencies.now();
    if (run.mode() === 'skipping') {
      await finishOnStoppedRoute(run, message, envelope, startedAt);
      return;
    }
    const result = tooDeep(dependencies, envelope) ?? (await run.runAdapter(envelope));
    if (dependencies.signal.aborted) {
      await message.ack(); // the execution was cancelled; its messages stay as they are
      return;
    }
    const finished = finishedMessage(dependencies, envelope, startedAt, result.attempts);
    if ('outputs' in result && result.outputs.length === 0) {
      // Nothing to queue or send (a terminal stage's message): the finish alone, without the
      // preparing and publishing machinery, which cost a sink's every message its garbage.
      const request = { message: finished, status: 'completed', error: null, outputs: NO_OUTPUTS } as const;
      dependencies.onFinished(await run.finish(request));
    } else await recordResult(run, envelope, result, finished);
    if (run.infrastructureFailures.size > 0) run.infrastructureFailures.delete(envelope.message_id);
    await message.ack();
  } catch (error) {
    await giveBackOrFail(run, message, envelope, error);
  }
}

function finishedMessage(
  dependencies: ProcessorDependencies,
  envelope: Envelope,
  startedAt: Date,
  attempts: number,
): FinishedMessage {
  return {
    message_id: envelope.message_id,
    execution_id: dependencies.executionId,
    started_at: startedAt,
    finished_at: dependencies.now(),
    attempts,
  };
}

/** The failure of a message past max_lineage_depth, or undefined for one within it. */
function tooDeep(dependencies: ProcessorDependencies, envelope: Envelope): AdapterResult | undefined {
  const maxDepth = dependencies.resources.settings.max_lineage_depth;
  if ((envelope.depth ?? 0) <= maxDepth) return undefined;
  return {
    error: `lineage depth ${envelope.depth} passes max_lineage_depth (${maxDepth}): do routes send messages round in a cycle?`,
    attempts: 0,
  };
}

/** A stopped route drains: its messages are recorded as skipped so executions still end. */
async function finishOnStoppedRoute(
  run: ProcessorRun,
  message: BrokerMessage,
  envelope: Envelope,
  startedAt: Date,
): Promise<void> {
  const finished = finishedMessage(run.dependencies, envelope, startedAt, 0);
  run.dependencies.onFinished(
    await run.finish({ message: finished, status: 'skipped', error: ROUTE_STOPPED, outputs: NO_OUTPUTS }),
  );
  await message.ack();
}

/** A result other than a completion without outputs: skipped, failed, or outputs to send. */
async function recordResult(
  run: ProcessorRun,
  envelope: Envelope,
  result: AdapterResult,
  finished: FinishedMessage,
): Promise<void> {
  const { dependencies, finish } = run;
  if ('skipped' in result) {
    dependencies.onFinished(
      await finish({ message: finished, status: 'skipped', error: result.skipped, outputs: NO_OUTPUTS }),
    );
  } else if ('error' in result) {
    await finishFailed(run, envelope, finished, result.error);
  } else {
    await queueOutputsAndFinish(dependencies, envelope, result, finished, finish);
  }
}

/** A failed message recorded, and its lineage.failed event raised once the finish is applied. */
async function finishFailed(
  run: ProcessorRun,
  envelope: Envelope,
  finished: FinishedMessage,
  error: string,
): Promise<void> {
  const { dependencies } = run;
  const failedEvent = lineageFailed(dependencies, envelope, error);
  const outcome = await run.finish({
    message: finished,
    status: 'failed',
    error,
    outputs: NO_OUTPUTS,
    failedEvent,
  });
  if (outcome.applied) dependencies.events.emit(failedEvent);
  dependencies.onFinished(outcome, true);
}

/**
 * The database or broker failed us: give the message back (redelivered after a back-off),
 * a bounded number of times; then record it as failed rather than cycle for ever.
 */
async function giveBackOrFail(
  run: ProcessorRun,
  message: BrokerMessage,
  envelope: Envelope,
  error: unknown,
): Promise<void> {
  const { dependencies, infrastructureFailures } = run;
  const { stage } = dependencies;
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
    const at = dependencies.now();
    const finished = {
      message_id: envelope.message_id,
      execution_id: dependencies.executionId,
      started_at: at,
      finished_at: at,
      attempts: failures,
    };
    await finishFailed(run, envelope, finished, reason);
    await message.ack();
  } catch {
    await message.nack(); // not even the failure can be recorded: keep the message
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
