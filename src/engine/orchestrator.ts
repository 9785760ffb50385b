/**
 * The orchestrator runs executions: it creates them (spec 4.5 run steps), starts a processor
 * for every stage of every route, notices when they finish, cancels them, and on start-up
 * resumes every execution the database says is running, republishing its queued messages from
 * the lineage outbox. A poll of the database keeps instances in step: an execution started or
 * cancelled on another instance is attached or detached here within one interval.
 */
import { setMaxListeners } from 'node:events';
import type { AdapterResources } from '../adapters/adapter.js';
import type { ExecutionRow, FinishOutcome } from '../db/execution-types.js';
import { AppError } from '../errors.js';
import type { ExecutionEventType } from '../events/event-bus.js';
import { createBatcher } from './batcher.js';
import { parseConfigYamlOffThread } from './config/parse-thread.js';
import { encodeEnvelope, timestampWithMicroseconds } from './envelope.js';
import { buildExecutionPlan, type ExecutionPlan, messageBudget, queueName } from './execution-plan.js';
import { inWindows, PUBLISH_WINDOW } from './outputs.js';
import { createRouteState, type RouteAction, type RouteSummary } from './route-state.js';
import {
  REPUBLISHED_HEADER,
  SETTLING_MESSAGES,
  type StageProcessor,
  startStageProcessor,
} from './stage-processor.js';

export type * from './orchestrator-types.js';

import { startExecutionSpan, traceparentOf } from '../tracing/tracing.js';
import type { Orchestrator, OrchestratorDependencies } from './orchestrator-types.js';
export type { RouteAction, RouteSummary };

interface AttachedExecution {
  row: ExecutionRow;
  plan: ExecutionPlan;
  processors: StageProcessor[];
  abort: AbortController;
}

export function createOrchestrator(dependencies: OrchestratorDependencies): Orchestrator {
  const { repository, broker, storage, events, now, newId, logger } = dependencies;
  const attached = new Map<string, AttachedExecution>();
  const attaching = new Map<string, Promise<void>>();
  const resources: AdapterResources = { ...dependencies.adapterResources, now, newId };
  const lineage = {
    // Up to every settling message of a stage in one transaction.
    finish: createBatcher(repository.finishMessages, SETTLING_MESSAGES),
    isFinished: createBatcher(async (ids: string[]) => {
      const finished = await repository.finishedAmong(ids);
      return ids.map((id) => finished.has(id));
    }),
    addOutputs: repository.addMessages,
  };
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  /** The poll under way, awaited by stop() so the database can be closed right after it. */
  let polling: Promise<void> | undefined;
  const processing = dependencies.processMessages !== false;
  const counts = { received: 0, completed: 0, failed: 0 };
  const routeState = createRouteState({
    routes: dependencies.routes,
    repository,
    registry: dependencies.registry,
    now,
  });
  const { planFor, modeFor } = routeState;

  async function applyControls(): Promise<void> {
    for (const execution of attached.values()) {
      for (const processor of execution.processors) {
        const wanted = modeFor(processor.stage.routeId);
        if (processor.mode() !== wanted) await processor.setMode(wanted);
      }
    }
  }

  function emitExecution(type: ExecutionEventType, row: ExecutionRow): void {
    events.emit({
      type,
      execution_id: row.id,
      config_id: row.config_id,
      status: row.status,
      timestamp: now().toISOString(),
      error: row.error,
      outcome: row.outcome,
      first_errors: row.first_errors ?? [],
    });
  }

  function onFinished(outcome: FinishOutcome, failed = false): void {
    if (outcome.applied) {
      if (failed) counts.failed++;
      else counts.completed++;
    }
    const row = outcome.finishedExecution;
    if (!row) return;
    if (row.status === 'failed') {
      logger.error({ execution_id: row.id }, `execution failed: ${row.error}`);
      emitExecution('execution.failed', row);
    } else {
      emitExecution('execution.completed', row);
      void warnOfPartialFailure(row);
    }
    // Detach after the current handler returns, so its acknowledgement is not cut short. A
    // processor that fails to stop is logged: nothing else awaits this.
    setImmediate(() => {
      detach(row.id).catch((error: unknown) =>
        logger.error(
          { err: error, execution_id: row.id },
          'cannot stop the processors of a finished execution',
        ),
      );
    });
  }

  /** A completed execution with failed messages says so in the log, with the first error. */
  async function warnOfPartialFailure(row: ExecutionRow): Promise<void> {
    try {
      const statistics = await repository.statistics(row.id);
      if (statistics.failed_messages === 0) return;
      const first = statistics.first_errors[0];
      logger.warn(
        { execution_id: row.id, failed_messages: statistics.failed_messages },
        `execution completed with ${statistics.failed_messages} of ${statistics.total_messages} messages failed` +
          (first ? `; first: ${first.route_id}/${first.stage}: ${first.error}` : ''),
      );
    } catch (error) {
      logger.error(
        { err: error, execution_id: row.id },
        'cannot read the statistics of a finished execution',
      );
    }
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
        await failExecution(row, `cannot start: ${(error as Error).message}`);
        return;
      }
      const abort = new AbortController();
      // Every adapter call of the execution listens to this signal (rate-limit waits, fetches),
      // dozens at once by design: no leak warning past Node's default of ten listeners.
      setMaxListeners(0, abort.signal);
      const execution: AttachedExecution = { row, plan, processors: [], abort };
      try {
        for (const route of plan.routes.values()) {
          for (const stage of route.stages) {
            execution.processors.push(
              await startStageProcessor({
                executionId: row.id,
                configId: row.config_id,
                plan,
                stage,
                broker,
                storage,
                lineage,
                events,
                resources,
                now,
                signal: abort.signal,
                onFinished,
                maxDeliveries: dependencies.maxDeliveries,
                onReceived: () => {
                  counts.received++;
                },
                onError: (error, context) => logger.error({ err: error, execution_id: row.id }, context),
              }),
            );
          }
        }
      } catch (error) {
        await Promise.all(execution.processors.map((processor) => processor.stop()));
        await failExecution(row, `cannot start: ${(error as Error).message}`);
        return;
      }
      attached.set(row.id, execution);
      for (const processor of execution.processors) {
        const wanted = modeFor(processor.stage.routeId);
        if (wanted !== 'run') await processor.setMode(wanted);
      }
      if (republish) {
        // Lost by the in-process broker at the crash, or never published: send them again.
        // Duplicates are harmless (a finished message is acknowledged and skipped).
        for (const message of await repository.queuedMessages(row.id)) {
          if (message.envelope) {
            await broker.publish(queueName(row.id, message.route_id, message.stage), message.envelope, {
              [REPUBLISHED_HEADER]: '1',
            });
          }
        }
      }
    })().finally(() => attaching.delete(row.id));
    attaching.set(row.id, work);
    return work;
  }

  async function detach(executionId: string): Promise<void> {
    const execution = attached.get(executionId);
    if (!execution) return;
    attached.delete(executionId);
    execution.abort.abort();
    await Promise.all(execution.processors.map((processor) => processor.stop()));
  }

  async function failExecution(row: ExecutionRow, error: string): Promise<void> {
    const ended = await repository.endExecution(row.id, 'failed', now(), error);
    logger.error({ execution_id: row.id }, error);
    if (ended) emitExecution('execution.failed', ended);
  }

  async function synchronise(): Promise<void> {
    await routeState.load();
    await applyControls();
    const rows = await repository.runningExecutions();
    const runningIds = new Set(rows.map((row) => row.id));
    for (const row of rows) if (!attached.has(row.id)) await attach(row, false);
    for (const id of attached.keys()) if (!runningIds.has(id)) await detach(id);
  }

  function schedulePoll(): void {
    const interval = dependencies.pollIntervalMs ?? 1000;
    timer = setTimeout(async () => {
      polling = synchronise().catch((error) => {
        logger.error({ err: error }, 'orchestrator poll failed');
      });
      await polling;
      polling = undefined;
      if (running) schedulePoll();
    }, interval);
    timer.unref();
  }

  function requireRunning(): void {
    if (!running) throw new AppError('orchestrator_unavailable', 'the orchestrator is not running');
  }

  return {
    async start() {
      if (running) return;
      running = true;
      await routeState.load();
      if (!processing) return;
      for (const row of await repository.runningExecutions()) {
        logger.info({ execution_id: row.id }, 'resuming execution');
        await attach(row, true);
      }
      schedulePoll();
    },

    async stop() {
      running = false;
      if (timer) clearTimeout(timer);
      await polling;
      await Promise.all([...attached.keys()].map((id) => detach(id)));
    },

    isRunning: () => running,

    async run(configId, options = {}) {
      requireRunning();
      const config = await dependencies.configs.get(configId);
      if (!config.is_runnable) {
        throw new AppError('config_invalid', `config ${configId} has validation errors and cannot run`, {
          body: { ...config.validation_report },
        });
      }
      const parsed = await parseConfigYamlOffThread(config.config_yaml);
      dependencies.configs.refuseNulCharactersOfStored(parsed);
      const plan = buildExecutionPlan(config.config_yaml, dependencies.registry, parsed);
      await routeState.bringBack([...plan.routes.keys()]);
      const executionId = newId();
      const payload = { ...plan.initPayload, ...(options.payload ?? {}) };
      const initRoute = plan.routes.get(plan.initRoute);
      const firstStage = initRoute?.stages[0];
      if (!firstStage) throw new AppError('config_invalid', `init route ${plan.initRoute} has no stages`);
      const messageId = newId();
      // The root of the execution's trace (a no-op unless tracing is on, tracing.ts).
      const span = startExecutionSpan({
        execution_id: executionId,
        config_id: config.id,
        config_name: config.name,
      });
      const traceparent = traceparentOf(span);
      span.end();
      const envelope = {
        message_id: messageId,
        correlation_id: '',
        execution_id: executionId,
        route_id: plan.initRoute,
        stage: 'init',
        timestamp: timestampWithMicroseconds(now()),
        payload,
        metadata: {
          ...plan.initMetadata,
          config_id: config.id,
          config_hash: config.config_hash,
          config_version: config.version,
          origin: config.origin,
          ...(options.tag ? { tag: options.tag } : {}),
        },
        ...(traceparent ? { traceparent } : {}),
      };
      const bytes = await encodeEnvelope(envelope, storage);
      let row: ExecutionRow;
      try {
        row = await repository.createExecution({
          id: executionId,
          config_id: config.id,
          config_version: config.version,
          config_hash: config.config_hash,
          config_yaml: config.config_yaml,
          tag: options.tag ?? null,
          skip_init_message: options.skipInitMessage === true,
          init_payload: payload,
          message_budget: messageBudget(plan, resources.settings),
          init: options.skipInitMessage
            ? undefined
            : {
                message_id: messageId,
                correlation_id: null,
                route_id: plan.initRoute,
                stage: firstStage.name,
                emitted_by: 'init',
                envelope: bytes,
              },
          now: now(),
        });
      } catch (error) {
        // Only the tag's unique index means "tag already used"; another unique violation (an
        // id taken twice) is a fault of its own and keeps its error.
        const violation = error as { code?: string; constraint?: string };
        if (
          options.tag !== undefined &&
          violation.code === '23505' &&
          violation.constraint === 'executions_tag_unique'
        ) {
          throw new AppError(
            'bad_request',
            `tag ${JSON.stringify(options.tag)} is already used by another execution`,
          );
        }
        throw error;
      }
      emitExecution('execution.started', row);
      if (processing) await attach(row, false);
      if (!options.skipInitMessage && (!processing || attached.has(row.id))) {
        await broker.publish(queueName(row.id, plan.initRoute, firstStage.name), bytes);
      }
      return (await repository.findExecution(row.id)) ?? row;
    },

    async cancel(executionId) {
      const ended = await repository.endExecution(executionId, 'cancelled', now());
      if (ended) {
        await detach(executionId);
        emitExecution('execution.cancelled', ended);
        return ended;
      }
      const row = await repository.findExecution(executionId);
      if (!row) throw new AppError('execution_not_found', `execution ${executionId} not found`);
      return row;
    },

    attachedExecutions: () => [...attached.keys()],

    routes: routeState.summaries,

    async controlRoute(routeId, action) {
      requireRunning();
      const summary = (await routeState.summaries()).find((route) => route.route_id === routeId);
      if (!summary)
        throw new AppError('route_not_found', `route ${JSON.stringify(routeId)} is in no active execution`);
      const control = await routeState.apply(routeId, action);
      await applyControls();
      return {
        route_id: routeId,
        action,
        status: control.stopped ? 'stopped' : 'running',
        paused: control.paused,
        affected_executions: summary.execution_ids.length,
      };
    },

    async restartProcessors() {
      requireRunning();
      routeState.forgetPlans();
      await Promise.all([...attached.keys()].map((id) => detach(id)));
      await routeState.load();
      let routes = 0;
      for (const row of await repository.runningExecutions()) {
        await attach(row, true);
        routes += attached.get(row.id)?.plan.routes.size ?? 0;
      }
      return routes;
    },

    async inject(executionId, routeId, messages) {
      requireRunning();
      const row = await repository.findExecution(executionId);
      if (!row) throw new AppError('execution_not_found', `execution ${executionId} not found`);
      const firstStage = routeState.planFor(row).routes.get(routeId)?.stages[0];
      if (!firstStage)
        throw new AppError('route_not_found', `route ${JSON.stringify(routeId)} is not in this execution`);
      const prepared = [];
      for (const message of messages) {
        // Replayed messages have no parent in this execution; each gets a correlation id of
        // its own (spec 4.7 rule 1), which the upstream walk treats as the end of the chain.
        const envelope = {
          message_id: newId(),
          correlation_id: newId(),
          execution_id: executionId,
          route_id: routeId,
          stage: 'replay',
          timestamp: timestampWithMicroseconds(now()),
          payload: message.payload,
          metadata: message.metadata,
        };
        prepared.push({
          message_id: envelope.message_id,
          correlation_id: envelope.correlation_id,
          route_id: routeId,
          stage: firstStage.name,
          emitted_by: 'replay',
          envelope: await encodeEnvelope(envelope, storage),
        });
      }
      const added = await repository.addMessages(executionId, prepared, now());
      if (added.failedExecution)
        onFinished({ applied: false, inserted: [], finishedExecution: added.failedExecution });
      const inserted = new Set(added.inserted);
      const queue = queueName(executionId, routeId, firstStage.name);
      await inWindows(
        prepared
          .filter((message) => inserted.has(message.message_id))
          .map((message) => () => broker.publish(queue, message.envelope)),
        PUBLISH_WINDOW,
      );
      return inserted.size;
    },

    counters() {
      let inFlight = 0;
      for (const execution of attached.values()) {
        for (const processor of execution.processors) inFlight += processor.inFlight();
      }
      return { ...counts, inFlight };
    },
  };
}
