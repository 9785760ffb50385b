/**
 * The orchestrator's entry points that put messages into an execution (orchestrator.ts):
 * running a config (spec 4.5 run steps: the execution row, its init message, its processors)
 * and injecting replayed messages into a route of a running execution.
 */
import type { AdapterResources } from '../adapters/adapter.js';
import type { ExecutionRow } from '../db/execution-types.js';
import { AppError } from '../errors.js';
import { startExecutionSpan, traceparentOf } from '../tracing/tracing.js';
import { parseConfigYamlOffThread } from './config/parse-thread.js';
import { encodeEnvelope, timestampWithMicroseconds } from './envelope.js';
import type { ExecutionAttachment } from './execution-attachment.js';
import { buildExecutionPlan, messageBudget, queueName } from './execution-plan.js';
import type { ExecutionReporting } from './execution-reporting.js';
import type { Orchestrator, OrchestratorDependencies, RunOptions } from './orchestrator-types.js';
import { inWindows, PUBLISH_WINDOW } from './outputs.js';
import type { createRouteState } from './route-state.js';

/** What the entry points use of the orchestrator. */
export interface EntryPointContext {
  dependencies: OrchestratorDependencies;
  routeState: ReturnType<typeof createRouteState>;
  resources: AdapterResources;
  reporting: ExecutionReporting;
  attachment: ExecutionAttachment;
  /** false on an API-only instance: no processors attached here. */
  processing: boolean;
}

/** Creates an execution of `configId`, attaches it (when processing here) and publishes its init message. */
export async function runExecution(
  context: EntryPointContext,
  configId: string,
  options: RunOptions = {},
): Promise<ExecutionRow> {
  const { dependencies, routeState, resources, processing } = context;
  const { repository, broker, storage, now, newId } = dependencies;
  const { attach, attached } = context.attachment;
  const { emitExecution } = context.reporting;
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
    // Only the tag's unique index means "tag already used"; another unique violation (an id
    // taken twice) is a fault of its own and keeps its error.
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
}

/**
 * Publishes payloads into the inbound queue of `routeId` of a running execution (replay):
 * each message is recorded in lineage first, then published. Returns how many were sent.
 */
export async function injectMessages(
  context: EntryPointContext,
  executionId: string,
  routeId: string,
  messages: Parameters<Orchestrator['inject']>[2],
): Promise<number> {
  const { dependencies, routeState } = context;
  const { repository, broker, storage, now, newId } = dependencies;
  const { onFinished } = context.attachment;
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
}
