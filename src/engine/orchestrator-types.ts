/** What the orchestrator is given and what it offers (orchestrator.ts). */
import type { AdapterResources } from '../adapters/adapter.js';
import type { AdapterRegistry } from '../adapters/registry.js';
import type { Broker } from '../broker/broker.js';
import type { ExecutionRow } from '../db/execution-types.js';
import type { ExecutionsRepository } from '../db/executions-repository.js';
import type { RoutesRepository } from '../db/routes-repository.js';
import type { EventBus } from '../events/event-bus.js';
import type { ObjectStore } from '../storage/object-store.js';
import type { ConfigStore } from './config/config-store.js';
import type { RouteAction, RouteSummary } from './route-state.js';

export interface OrchestratorLogger {
  info(object: object, message: string): void;
  error(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface OrchestratorDependencies {
  repository: ExecutionsRepository;
  routes: RoutesRepository;
  configs: ConfigStore;
  registry: AdapterRegistry;
  broker: Broker;
  storage: ObjectStore;
  events: EventBus;
  now: () => Date;
  newId: () => string;
  logger: OrchestratorLogger;
  /** What adapters get besides `now` and `newId` (built by createEngine). */
  adapterResources: Omit<AdapterResources, 'now' | 'newId'>;
  /** How often the database is polled for executions started or cancelled elsewhere. */
  pollIntervalMs?: number;
  /** Deliveries of a message allowed to fail on infrastructure errors (default 10). */
  maxDeliveries?: number;
  /**
   * false for an API-only instance (`weir serve --role api`): it creates, publishes, cancels
   * and controls executions, but runs no processors; worker instances do the processing.
   */
  processMessages?: boolean;
}

export interface RunOptions {
  skipInitMessage?: boolean;
  tag?: string | undefined;
  /** Fields merged over the YAML init_message payload. */
  payload?: Record<string, unknown> | null | undefined;
}

export interface RouteControlResult {
  route_id: string;
  action: RouteAction;
  status: 'running' | 'stopped';
  paused: boolean;
  affected_executions: number;
}

export interface Orchestrator {
  start(): Promise<void>;
  stop(): Promise<void>;
  isRunning(): boolean;
  run(configId: string, options?: RunOptions): Promise<ExecutionRow>;
  cancel(executionId: string): Promise<ExecutionRow>;
  /** Executions whose processors run on this instance (API-only instances: none). */
  attachedExecutions(): string[];
  /** Routes of every running execution (from the database, so across instances) and stopped routes. */
  routes(): Promise<RouteSummary[]>;
  controlRoute(routeId: string, action: RouteAction): Promise<RouteControlResult>;
  /** Stops every processor, reattaches every running execution, returns the routes started. */
  restartProcessors(): Promise<number>;
  /**
   * Publishes payloads into the inbound queue of `routeId` of a running execution (replay):
   * each message is recorded in lineage first, then published. Returns how many were sent.
   */
  inject(
    executionId: string,
    routeId: string,
    messages: ReadonlyArray<{ payload: Record<string, unknown>; metadata: Record<string, unknown> }>,
  ): Promise<number>;
  /** Local counters of this instance since start. */
  counters(): { received: number; completed: number; failed: number; inFlight: number };
}
