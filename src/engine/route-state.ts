/**
 * Route state shared by every instance: pause/stop controls (table route_controls) and the
 * routes of running executions, planned from their config snapshots (one plan per config
 * hash, however many executions share it).
 */
import type { AdapterRegistry } from '../adapters/registry.js';
import type { ExecutionRow } from '../db/execution-types.js';
import type { ExecutionsRepository } from '../db/executions-repository.js';
import type { RouteControl, RoutesRepository } from '../db/routes-repository.js';
import { buildExecutionPlan, type ExecutionPlan, queueName } from './execution-plan.js';
import type { ProcessorMode } from './stage-processor.js';

export type RouteAction = 'pause' | 'resume' | 'stop';

export interface RouteSummary {
  route_id: string;
  /** The spec's two route states; stopped routes are removed from the summaries (see below). */
  status: 'running' | 'stopped';
  paused: boolean;
  /** Running executions that contain the route. */
  execution_ids: string[];
  stages: Array<{ name: string; type: string; concurrency: number }>;
  inbound_queue: string;
}

export function createRouteState(dependencies: {
  routes: RoutesRepository;
  repository: ExecutionsRepository;
  registry: AdapterRegistry;
  now: () => Date;
}) {
  let controls = new Map<string, RouteControl>();
  /**
   * Counts this instance's own control changes. A reload whose read began before one of them
   * could return the row as it was before the change, and would undo it here (a stopped route
   * a new run had just brought back); such a reload is dropped, and the next one catches up.
   */
  let localChanges = 0;
  const plans = new Map<string, ExecutionPlan>();

  function planFor(row: ExecutionRow): ExecutionPlan {
    let plan = plans.get(row.config_hash);
    if (!plan) {
      plan = buildExecutionPlan(row.config_yaml, dependencies.registry);
      plans.set(row.config_hash, plan);
    }
    return plan;
  }

  return {
    planFor,

    forgetPlans: () => plans.clear(),

    async load(): Promise<void> {
      const changesBefore = localChanges;
      const rows = await dependencies.routes.controls();
      if (localChanges !== changesBefore) return;
      controls = new Map(rows.map((control) => [control.route_id, control]));
    },

    modeFor(routeId: string): ProcessorMode {
      const control = controls.get(routeId);
      if (control?.stopped) return 'skipping';
      return control?.paused ? 'paused' : 'run';
    },

    async apply(routeId: string, action: RouteAction): Promise<RouteControl> {
      const change = action === 'stop' ? { stopped: true } : { paused: action === 'pause' };
      const control = await dependencies.routes.setControl(routeId, change, dependencies.now());
      controls.set(routeId, control);
      localChanges++;
      return control;
    },

    /** A new run brings stopped routes of its config back. */
    async bringBack(routeIds: readonly string[]): Promise<void> {
      for (const routeId of routeIds) {
        if (controls.get(routeId)?.stopped) {
          const control = await dependencies.routes.setControl(
            routeId,
            { stopped: false },
            dependencies.now(),
          );
          // `controls` read after the write: a reload during it may have replaced the map (with
          // the row as it was before the write), and a set on the old map would be lost.
          controls.set(routeId, control);
          localChanges++;
        }
      }
    },

    /**
     * Routes of every running execution (from the database, so across instances). A stopped
     * route is left out: DELETE stops and removes a route (spec 3.3), so it answers 404 until a
     * new run of a config that contains it brings it back. Its processors meanwhile skip the
     * messages that reach them, so its executions still end.
     */
    async summaries(): Promise<RouteSummary[]> {
      const summaries = new Map<string, RouteSummary>();
      for (const row of await dependencies.repository.runningExecutions()) {
        let plan: ExecutionPlan;
        try {
          plan = planFor(row);
        } catch {
          continue; // cannot be planned: attaching it reports and fails it
        }
        for (const route of plan.routes.values()) {
          if (controls.get(route.id)?.stopped) continue;
          let summary = summaries.get(route.id);
          if (!summary) {
            summary = {
              route_id: route.id,
              status: 'running',
              paused: controls.get(route.id)?.paused ?? false,
              execution_ids: [],
              stages: route.stages.map((stage) => ({
                name: stage.name,
                type: stage.type,
                concurrency: stage.concurrency,
              })),
              inbound_queue: queueName('{execution_id}', route.id, route.stages[0]?.name ?? ''),
            };
            summaries.set(route.id, summary);
          }
          summary.execution_ids.push(row.id);
        }
      }
      return [...summaries.values()].sort((a, b) => a.route_id.localeCompare(b.route_id));
    },
  };
}
