/**
 * Attaching executions to this instance (orchestrator.ts): a stage processor for every stage
 * of every route of a running execution, the lineage writes they share (group commit), the
 * instance's counters, and detaching once the execution ends or is cancelled.
 */
import { setMaxListeners } from 'node:events';
import type { AdapterResources } from '../adapters/adapter.js';
import type { QueuedCursor } from '../db/execution-queries.js';
import type { ExecutionRow, FinishOutcome } from '../db/execution-types.js';
import { createBatcher } from '../runtime/batcher.js';
import { mapLimited } from '../runtime/map-limited.js';
import { type ExecutionPlan, queueName } from './execution-plan.js';
import type { ExecutionReporting } from './execution-reporting.js';
import type { OrchestratorDependencies } from './orchestrator-types.js';
import type { createRouteState } from './route-state.js';
import {
  type ProcessorDependencies,
  REPUBLISHED_HEADER,
  SETTLING_MESSAGES,
  type StageProcessor,
  startStageProcessor,
} from './stage-processor.js';

/**
 * A finish batch of fewer than `below` messages waits up to `ms` for more, but only while
 * finishes stream in (the last batch ended under STREAMING_GAP_MS ago): a message after a
 * quiet spell is finished at once. With a broker over the network, messages arrive a few at a
 * time and each batch was one statement for about 70 messages (1,438 statements for 100,000 in
 * bench:engine on STOMP, against 99 in process); a statement's fixed cost (plan, commit, the
 * trip to PGlite's thread) is many messages' worth. As PostgreSQL's commit_delay, and
 * commit_siblings for the condition.
 */
const FINISH_LINGER = { ms: 2, below: 256 };
const STREAMING_GAP_MS = 20;
/** Queued messages read from the outbox at once when an execution resumes. */
const OUTBOX_PAGE = 1000;
/** Republished messages awaiting the broker's receipt at once. */
const REPUBLISH_CONCURRENCY = 64;

export interface AttachedExecution {
  row: ExecutionRow;
  plan: ExecutionPlan;
  processors: StageProcessor[];
  abort: AbortController;
}

export interface ExecutionAttachment {
  /** The executions whose processors run here, by id. */
  readonly attached: ReadonlyMap<string, AttachedExecution>;
  /** Starts the execution's processors (once); `republish` sends its queued messages again. */
  attach(row: ExecutionRow, republish: boolean): Promise<void>;
  /** Stops the execution's processors. */
  detach(executionId: string): Promise<void>;
  /** A message finished (or an execution ended beside its messages): counted, reported, detached. */
  onFinished(outcome: FinishOutcome, failed?: boolean): void;
  /** Puts every processor in the mode its route's controls ask for. */
  applyControls(): Promise<void>;
  counters(): { received: number; completed: number; failed: number; inFlight: number };
}

export function createExecutionAttachment(
  dependencies: OrchestratorDependencies,
  routeState: ReturnType<typeof createRouteState>,
  reporting: ExecutionReporting,
  resources: AdapterResources,
): ExecutionAttachment {
  const { repository, broker, logger } = dependencies;
  const attached = new Map<string, AttachedExecution>();
  const attaching = new Map<string, Promise<void>>();
  const lineage = lineageWriters(repository);
  const counts = { received: 0, completed: 0, failed: 0 };
  const { planFor, modeFor } = routeState;

  async function applyControls(): Promise<void> {
    for (const execution of attached.values()) {
      for (const processor of execution.processors) {
        const wanted = modeFor(processor.stage.routeId);
        if (processor.mode() !== wanted) await processor.setMode(wanted);
      }
    }
  }

  function onFinished(outcome: FinishOutcome, failed = false): void {
    if (outcome.applied) {
      if (failed) counts.failed++;
      else counts.completed++;
    }
    const row = outcome.finishedExecution;
    if (!row) return;
    reporting.reportEnded(row);
    // Detach after the current handler returns, so its acknowledgement is not cut short.
    // A processor that fails to stop is logged: nothing else awaits this.
    setImmediate(() => {
      detach(row.id).catch((error: unknown) =>
        logger.error(
          { err: error, execution_id: row.id },
          'cannot stop the processors of a finished execution',
        ),
      );
    });
  }

  async function attach(row: ExecutionRow, republish: boolean): Promise<void> {
    if (attached.has(row.id)) return;
    const pending = attaching.get(row.id);
    if (pending) return pending;
    const work = (async () => {
      let plan: ExecutionPlan;
      try {
        plan = planFor(row);
      } catch (error) {
        await reporting.failExecution(row, `cannot start: ${(error as Error).message}`);
        return;
      }
      const abort = new AbortController();
      // Every adapter call of the execution listens to this signal (rate-limit waits, fetches),
      // dozens at once by design: no leak warning past Node's default of ten listeners.
      setMaxListeners(0, abort.signal);
      const execution: AttachedExecution = { row, plan, processors: [], abort };
      try {
        await startProcessors(execution, {
          broker,
          storage: dependencies.storage,
          lineage,
          events: dependencies.events,
          resources,
          now: dependencies.now,
          onFinished,
          maxDeliveries: dependencies.maxDeliveries,
          onReceived: () => {
            counts.received++;
          },
          onError: (error, context) => logger.error({ err: error, execution_id: row.id }, context),
        });
      } catch (error) {
        await Promise.all(execution.processors.map((processor) => processor.stop()));
        await reporting.failExecution(row, `cannot start: ${(error as Error).message}`);
        return;
      }
      attached.set(row.id, execution);
      for (const processor of execution.processors) {
        const wanted = modeFor(processor.stage.routeId);
        if (wanted !== 'run') await processor.setMode(wanted);
      }
      if (republish) await republishOutbox(row.id);
    })().finally(() => attaching.delete(row.id));
    attaching.set(row.id, work);
    return work;
  }

  /**
   * Sends an execution's queued messages again: lost by the in-process broker at the crash, or
   * never published. Duplicates are harmless (a finished message is acknowledged and skipped).
   * A page of the outbox at a time, with sends in flight together: each waits for the broker's
   * receipt, and one at a time a resumed execution of thousands of messages kept the service
   * from listening for over a minute on a loaded machine.
   */
  async function republishOutbox(executionId: string): Promise<void> {
    let after: QueuedCursor | undefined;
    for (;;) {
      const page = await repository.queuedMessages(executionId, { limit: OUTBOX_PAGE, after });
      await mapLimited(page, REPUBLISH_CONCURRENCY, async (message) => {
        if (!message.envelope) return;
        await broker.publish(queueName(executionId, message.route_id, message.stage), message.envelope, {
          [REPUBLISHED_HEADER]: '1',
        });
      });
      if (page.length < OUTBOX_PAGE) return;
      after = page.at(-1);
    }
  }

  async function detach(executionId: string): Promise<void> {
    const execution = attached.get(executionId);
    if (!execution) return;
    attached.delete(executionId);
    execution.abort.abort();
    await Promise.all(execution.processors.map((processor) => processor.stop()));
  }

  return {
    attached,
    attach,
    detach,
    onFinished,
    applyControls,
    counters() {
      let inFlight = 0;
      for (const execution of attached.values()) {
        for (const processor of execution.processors) inFlight += processor.inFlight();
      }
      return { ...counts, inFlight };
    },
  };
}

/** What every processor of an execution shares. */
type SharedProcessorOptions = Omit<
  ProcessorDependencies,
  'executionId' | 'configId' | 'plan' | 'stage' | 'signal'
>;

/**
 * Starts a processor for every stage of every route of `execution`, into its `processors`
 * (so that the caller can stop those started when one fails to start).
 */
async function startProcessors(execution: AttachedExecution, shared: SharedProcessorOptions): Promise<void> {
  const { row, plan, abort } = execution;
  for (const route of plan.routes.values()) {
    for (const stage of route.stages) {
      execution.processors.push(
        await startStageProcessor({
          executionId: row.id,
          configId: row.config_id,
          plan,
          stage,
          ...shared,
          signal: abort.signal,
        }),
      );
    }
  }
}

/** The lineage writes the stage processors of this instance share (group commit). */
function lineageWriters(repository: OrchestratorDependencies['repository']) {
  let lastFinishEnded = Number.NEGATIVE_INFINITY;
  const finishMessages = async (requests: Parameters<typeof repository.finishMessages>[0]) => {
    try {
      return await repository.finishMessages(requests);
    } finally {
      lastFinishEnded = performance.now();
    }
  };
  return {
    // Up to every settling message of a stage in one transaction; while finishes stream in, a
    // small batch waits a moment for more (FINISH_LINGER).
    finish: createBatcher(finishMessages, SETTLING_MESSAGES, {
      linger: { ...FINISH_LINGER, when: () => performance.now() - lastFinishEnded < STREAMING_GAP_MS },
    }),
    isFinished: createBatcher(async (ids: string[]) => {
      const finished = await repository.finishedAmong(ids);
      return ids.map((id) => finished.has(id));
    }),
    addOutputs: repository.addMessages,
  };
}
