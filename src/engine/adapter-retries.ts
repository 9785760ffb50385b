/**
 * One adapter call of a stage processor with the stage's retry policy, and the context the
 * adapter sees (ids, signal, sync state, claims, fan-in, and a writer for stored outputs).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type AdapterContext,
  type AdapterHandler,
  type AdapterOutput,
  isPermanentFailure,
  MessageSkipped,
} from '../adapters/adapter.js';
import type { Envelope } from './envelope.js';
import { retryDelay } from './execution-plan.js';
import { createStageOutputWriter, type WriteObject } from './stage-output.js';
import type { AdapterResult, ProcessorDependencies } from './stage-processor.js';

/**
 * One adapter call with the stage's retry policy: a MessageSkipped skips, a permanent failure
 * or the last attempt fails, anything else is tried again after the policy's delay.
 */
export async function runAdapterWithRetries(
  dependencies: ProcessorDependencies,
  handler: AdapterHandler,
  tools: Pick<AdapterContext, 'syncState' | 'claims' | 'fanIn'>,
  payload: Record<string, unknown>,
  envelope: Envelope,
): Promise<AdapterResult> {
  const { stage, executionId, storage, broker, now, signal } = dependencies;
  const { syncState, claims, fanIn } = tools;
  let writer: WriteObject | undefined;
  const context: AdapterContext = {
    executionId,
    routeId: stage.routeId,
    stage: stage.name,
    messageId: envelope.message_id,
    correlationId: envelope.correlation_id,
    batchId: envelope.batch_id,
    metadata: envelope.metadata,
    destination: stage.destination,
    signal,
    syncState,
    claims,
    fanIn,
    // Built on the first write: most adapters write no object, and the writer and its two
    // contexts were garbage made for every message.
    writeObject: (path, body, options) => {
      writer ??= createStageOutputWriter(
        { storage, broker, events: dependencies.events, now, newId: dependencies.resources.newId },
        {
          executionId,
          configId: dependencies.configId,
          routeId: stage.routeId,
          stage: stage.name,
          adapterType: stage.type,
          messageId: envelope.message_id,
        },
      );
      return writer(path, body, options);
    },
  };
  let lastError = 'unknown error';
  for (let attempt = 1; attempt <= stage.retry.max_attempts; attempt++) {
    try {
      const produced = await handler(payload, context);
      // An array (most adapters answer one) is copied as it is: iterating it with for await
      // made an iterator and a promise per output, and two for a sink's empty answer.
      const outputs = Array.isArray(produced) ? [...produced] : await collectOutputs(produced);
      return { outputs, attempts: attempt };
    } catch (error) {
      if (error instanceof MessageSkipped) return { skipped: error.message, attempts: attempt };
      lastError = error instanceof Error ? error.message : String(error);
      if (signal.aborted || attempt === stage.retry.max_attempts || isPermanentFailure(error))
        return { error: lastError, attempts: attempt };
      await sleep(retryDelay(stage.retry, attempt + 1), undefined, { signal }).catch(() => {});
    }
  }
  return { error: lastError, attempts: stage.retry.max_attempts };
}

/**
 * The outputs of an adapter that answers an iterable (a fan-out's generator). Its own function:
 * the for await's registers would otherwise be in the frame of every adapter call.
 */
async function collectOutputs(produced: AsyncIterable<AdapterOutput> | Iterable<AdapterOutput>) {
  const outputs: AdapterOutput[] = [];
  for await (const output of produced) outputs.push(output);
  return outputs;
}
