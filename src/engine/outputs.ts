/**
 * What a stage's outputs become: envelopes addressed to their next hop (explicit destination,
 * the step's destination, or the next stage), with ids derived from the input so a replayed
 * message yields the same outputs; and the pipelined sends that publish them.
 */
import type { AdapterOutput } from '../adapters/adapter.js';
import type { NewMessage } from '../db/execution-types.js';
import type { ObjectStore } from '../storage/object-store.js';
import { activeTraceparent } from '../tracing/tracing.js';
import { type Envelope, encodeEnvelope, envelopeRunEncoder, timestampWithMicroseconds } from './envelope.js';
import { type ExecutionPlan, nextHop, queueName, type StagePlan } from './execution-plan.js';
import { deriveMessageId } from './message-ids.js';

/** Sends in flight at once per message: a large fan-out is pipelined, not sent one by one. */
export const PUBLISH_WINDOW = 256;

export interface PreparedOutputs {
  messages: NewMessage[];
  /** The queue of each message. */
  queues: string[];
}

/** The outputs in `range` (default all; ids are by position among all outputs) as queued messages. */
export async function prepareOutputs(
  context: {
    plan: ExecutionPlan;
    stage: StagePlan;
    executionId: string;
    storage: ObjectStore;
    now: () => Date;
  },
  input: Envelope,
  outputs: readonly AdapterOutput[],
  batchId?: string,
  range: { start: number; end: number } = { start: 0, end: outputs.length },
): Promise<PreparedOutputs> {
  const { plan, stage, executionId, storage } = context;
  const messages: NewMessage[] = [];
  const queues: string[] = [];
  const timestamp = timestampWithMicroseconds(context.now());
  // Outputs carry the trace context of the message's span (tracing on only).
  const traceparent = activeTraceparent();
  // The outputs share most fields: each shared field is encoded once (envelope.ts).
  const encode = envelopeRunEncoder();
  // Outputs mostly go to one next stage: its queue's name built once, not a new string per
  // output (which the broker then hashed again to find the queue).
  let lastTarget: StagePlan | undefined;
  let lastQueue = '';
  for (let index = range.start; index < Math.min(range.end, outputs.length); index++) {
    const output = outputs[index] as AdapterOutput;
    const target = nextHop(plan, stage, output.destination);
    if (!target) continue; // end of the route: the output leaves the pipeline
    const envelope: Envelope = {
      message_id: deriveMessageId(input.message_id, index),
      correlation_id: input.message_id,
      execution_id: executionId,
      route_id: target.routeId,
      stage: stage.name,
      timestamp,
      payload: output.payload,
      metadata: output.metadata ? { ...input.metadata, ...output.metadata } : input.metadata,
      depth: (input.depth ?? 0) + 1,
      ...(batchId ? { batch_id: batchId } : {}),
      ...(traceparent ? { traceparent } : {}),
    };
    messages.push({
      message_id: envelope.message_id,
      correlation_id: input.message_id,
      route_id: target.routeId,
      stage: target.name,
      emitted_by: stage.name,
      envelope: encode(envelope) ?? (await encodeEnvelope(envelope, storage)),
    });
    if (target !== lastTarget) {
      lastTarget = target;
      lastQueue = queueName(executionId, target.routeId, target.name);
    }
    queues.push(lastQueue);
  }
  return { messages, queues };
}

/** Runs `tasks` with at most `window` in flight. */
export async function inWindows(tasks: ReadonlyArray<() => Promise<void>>, window: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) await (tasks[next++] as () => Promise<void>)();
  };
  await Promise.all(Array.from({ length: Math.min(window, tasks.length) }, worker));
}
