/**
 * The orchestrator runs executions: it creates them (spec 4.5 run steps), starts a processor
 * for every stage of every route, notices when they finish, cancels them, and on start-up
 * resumes every execution the database says is running, republishing its queued messages from
 * the lineage outbox. A poll of the database keeps instances in step: an execution started or
 * cancelled on another instance is attached or detached here within one interval.
 *
 * Its parts: execution-attachment.ts (stage processors of the executions attached here),
 * execution-entry-points.ts (run, inject), execution-reporting.ts (events and log lines),
 * orchestrator-polling.ts (the poll that keeps instances in step). This file wires them and
 * holds the entry points that change which executions are attached (start, stop, cancel,
 * route controls, restart).
 */
import type { AdapterResources } from '../adapters/adapter.js';
import type { ExecutionRow } from '../db/execution-types.js';
import { AppError } from '../errors.js';
import { createExecutionAttachment } from './execution-attachment.js';
import { type EntryPointContext, injectMessages, runExecution } from './execution-entry-points.js';
import { createExecutionReporting } from './execution-reporting.js';
import { createOrchestratorPolling } from './orchestrator-polling.js';
import { createRouteState, type RouteAction, type RouteSummary } from './route-state.js';

export type * from './orchestrator-types.js';

import type { Orchestrator, OrchestratorDependencies } from './orchestrator-types.js';
export type { RouteAction, RouteSummary };

export function createOrchestrator(dependencies: OrchestratorDependencies): Orchestrator {
  const { repository, now, newId, logger } = dependencies;
  const resources: AdapterResources = { ...dependencies.adapterResources, now, newId };
  let running = false;
  const processing = dependencies.processMessages !== false;
  const routeState = createRouteState({
    routes: dependencies.routes,
    repository,
    registry: dependencies.registry,
    now,
  });
  const reporting = createExecutionReporting(dependencies);
  const attachment = createExecutionAttachment(dependencies, routeState, reporting, resources);
  const { attached, attach, detach, applyControls } = attachment;
  const entryPoints: EntryPointContext = {
    dependencies,
    routeState,
    resources,
    reporting,
    attachment,
    processing,
  };

  /**
   * The running executions, less those found drained and ended here: a finish drains an
   * execution in one statement and ends it in the next (src/db/finish-statement.ts), so an
   * instance that died between the two left it running with nothing pending. An execution
   * started with skip_init_message has created nothing yet: it waits for a replay.
   */
  async function runningExecutions(): Promise<ExecutionRow[]> {
    const rows = await repository.runningExecutions();
    const drained = rows.filter((row) => row.pending_messages <= 0 && row.created_messages > 0);
    if (drained.length === 0) return rows;
    const ended = new Set<string>();
    for (const row of await repository.endDrained(
      drained.map((row) => row.id),
      now(),
    )) {
      reporting.reportEnded(row);
      ended.add(row.id);
    }
    return rows.filter((row) => !ended.has(row.id));
  }

  async function synchronise(): Promise<void> {
    await routeState.load();
    await applyControls();
    const rows = await runningExecutions();
    const runningIds = new Set(rows.map((row) => row.id));
    for (const row of rows) if (!attached.has(row.id)) await attach(row, false);
    for (const id of attached.keys()) if (!runningIds.has(id)) await detach(id);
  }

  const polling = createOrchestratorPolling({
    synchronise,
    intervalMs: dependencies.pollIntervalMs ?? 1000,
    keepGoing: () => running,
    onError: (error) => {
      logger.error({ err: error }, 'orchestrator poll failed');
    },
  });

  function requireRunning(): void {
    if (!running) throw new AppError('orchestrator_unavailable', 'the orchestrator is not running');
  }

  return {
    async start() {
      if (running) return;
      running = true;
      await routeState.load();
      if (!processing) return;
      for (const row of await runningExecutions()) {
        logger.info({ execution_id: row.id }, 'resuming execution');
        await attach(row, true);
      }
      polling.schedule();
    },

    async stop() {
      running = false;
      await polling.stop();
      await Promise.all([...attached.keys()].map((id) => detach(id)));
    },

    isRunning: () => running,

    async run(configId, options = {}) {
      requireRunning();
      return runExecution(entryPoints, configId, options);
    },

    async cancel(executionId) {
      const ended = await repository.endExecution(executionId, 'cancelled', now());
      if (ended) {
        await detach(executionId);
        reporting.emitExecution('execution.cancelled', ended);
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
      for (const row of await runningExecutions()) {
        await attach(row, true);
        routes += attached.get(row.id)?.plan.routes.size ?? 0;
      }
      return routes;
    },

    async inject(executionId, routeId, messages) {
      requireRunning();
      return injectMessages(entryPoints, executionId, routeId, messages);
    },

    counters: () => attachment.counters(),
  };
}
