/**
 * A validated config turned into what the runtime needs: routes, their stages with resolved
 * adapter definitions, configs with defaults, retry policies, and where each stage's outputs go.
 */
import { Value } from 'typebox/value';
import type { AdapterDefinition } from '../adapters/adapter.js';
import type { AdapterRegistry } from '../adapters/registry.js';
import type { Settings } from '../settings.js';
import { type ParsedConfig, parseConfigYaml } from './config/parse-config.js';
import { type PipelineDocument, PipelineDocumentSchema } from './config/pipeline-schema.js';

export interface RetryPolicy {
  max_attempts: number;
  backoff_ms: number;
  multiplier: number;
  max_backoff_ms: number;
}

export interface StagePlan {
  routeId: string;
  name: string;
  index: number;
  type: string;
  definition: AdapterDefinition;
  config: Record<string, unknown>;
  concurrency: number;
  retry: RetryPolicy;
  /** Route id that receives this stage's outputs instead of the next stage. */
  destination: string | undefined;
  /** Batch stages: messages per handler call and the longest wait for a batch to fill. */
  batch: { size: number; max_wait_ms: number } | undefined;
}

export interface RoutePlan {
  id: string;
  stages: StagePlan[];
}

export interface ExecutionPlan {
  routes: Map<string, RoutePlan>;
  initRoute: string;
  initPayload: Record<string, unknown>;
  initMetadata: Record<string, unknown>;
  /** The config's `max_messages_per_execution`, if it sets one (capped by the setting at run). */
  messageBudget: number | undefined;
}

export const defaultRetry: RetryPolicy = {
  max_attempts: 3,
  backoff_ms: 1000,
  multiplier: 2,
  max_backoff_ms: 60_000,
};

/**
 * Builds the plan of a config that validated without errors; throws if it cannot. Callers that
 * can wait pass the YAML parsed off the event loop (parse-thread.ts); without it, it is parsed
 * here (a config that passed the parse limits).
 */
export function buildExecutionPlan(
  configYaml: string,
  registry: AdapterRegistry,
  parsed: ParsedConfig = parseConfigYaml(configYaml),
): ExecutionPlan {
  if (!parsed.ok) throw new Error(`config does not parse: ${parsed.problems[0]?.message}`);
  const document = Value.Default(PipelineDocumentSchema, structuredClone(parsed.value)) as PipelineDocument;
  const routes = new Map<string, RoutePlan>();
  for (const route of document.routes) {
    const stages = route.adapters.map((step, index): StagePlan => {
      const definition = registry.get(step.type);
      if (!definition) throw new Error(`adapter type ${step.type} is not registered`);
      const check = registry.checkConfig(definition, step.config ?? {});
      if (!check.valid) throw new Error(`config of ${step.type} in route ${route.id} is invalid`);
      return {
        routeId: route.id,
        name: step.name ?? step.type,
        index,
        type: step.type,
        definition,
        config: check.config,
        concurrency: step.concurrency ?? 1,
        retry: { ...defaultRetry, ...step.retry },
        destination: step.destination,
        batch: step.batch ? { size: step.batch.size, max_wait_ms: step.batch.max_wait_ms ?? 100 } : undefined,
      };
    });
    routes.set(route.id, { id: route.id, stages });
  }
  const firstRoute = document.routes[0]?.id;
  if (!firstRoute) throw new Error('config has no routes');
  return {
    routes,
    initRoute: document.init_message?.route ?? firstRoute,
    initPayload: (document.init_message?.payload as Record<string, unknown> | undefined) ?? {},
    initMetadata: (document.init_message?.metadata as Record<string, unknown> | undefined) ?? {},
    messageBudget: document.max_messages_per_execution,
  };
}

/**
 * The messages an execution of `plan` may create: the max_messages_per_execution setting, or
 * the config's value if lower. A config may not raise it: the setting bounds what any config
 * author can make the service do.
 */
export function messageBudget(
  plan: ExecutionPlan,
  settings: Pick<Settings, 'max_messages_per_execution'>,
): number {
  const limit = settings.max_messages_per_execution;
  return Math.min(limit, plan.messageBudget ?? limit);
}

/** Point-to-point queue of one stage of one route of one execution (execution id first). */
export function queueName(executionId: string, routeId: string, stage: string): string {
  return `weir.${executionId}.${routeId}.${stage}`;
}

/** Where an output of `stage` goes: an explicit destination route, the next stage, or nowhere. */
export function nextHop(
  plan: ExecutionPlan,
  stage: StagePlan,
  explicitDestination: string | undefined,
): StagePlan | undefined {
  const destination = explicitDestination ?? stage.destination;
  if (destination) return plan.routes.get(destination)?.stages[0];
  return plan.routes.get(stage.routeId)?.stages[stage.index + 1];
}

/** Delay before attempt `attempt` (2 = first retry). */
export function retryDelay(policy: RetryPolicy, attempt: number): number {
  return Math.min(policy.max_backoff_ms, policy.backoff_ms * policy.multiplier ** Math.max(0, attempt - 2));
}
