/**
 * The body of a delivered event (spec 6.1 rule 4 leaves it open), one shape for every type:
 *   {"id": "<UUIDv7 event id>", "type": "<event type>", "created_at": "<ISO time>",
 *    "data": {...the event's fields...}, "metadata": {}}
 * `id` is the event's id (the same for every subscription it goes to); the delivery id travels
 * in X-Svc-Delivery / webhook-id. A synthetic test event carries `metadata.__test__ = true`.
 */
import type { WeirEvent } from '../events/event-bus.js';

export const WEBHOOK_EVENT_TYPES = [
  'execution.started',
  'execution.completed',
  'execution.failed',
  'execution.cancelled',
  'storage.object_created',
  'lineage.failed',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const FILTER_KEYS = ['config_id', 'execution_id', 'route_id', 'adapter_name'] as const;
export type FilterKey = (typeof FILTER_KEYS)[number];
export type WebhookFilters = Partial<Record<FilterKey, string>>;

export interface WebhookEventBody {
  id: string;
  type: WebhookEventType;
  created_at: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

export function eventBody(event: WeirEvent, id: string): WebhookEventBody {
  const { type, timestamp, ...data } = event;
  return { id, type, created_at: timestamp, data, metadata: {} };
}

/**
 * The values an event offers to the subscription filters. Execution events have no route or
 * adapter, so a subscription filtering on those never receives them.
 */
export function filterValues(event: WeirEvent): WebhookFilters {
  const values: WebhookFilters = {
    config_id: event.config_id ?? undefined,
    execution_id: event.execution_id,
  };
  if (event.type === 'lineage.failed' || event.type === 'storage.object_created') {
    if (event.route_id) values.route_id = event.route_id;
    if (event.adapter_name) values.adapter_name = event.adapter_name;
  }
  return values;
}

/** A synthetic event of the real shape for the test endpoint (spec 6.1 rule 5). */
export function testEventBody(
  type: WebhookEventType,
  id: string,
  now: Date,
  filters: WebhookFilters,
): WebhookEventBody {
  const common = {
    execution_id: filters.execution_id ?? '00000000-0000-7000-8000-000000000000',
    config_id: filters.config_id ?? '00000000-0000-7000-8000-000000000000',
  };
  const data: Record<string, unknown> = type.startsWith('execution.')
    ? { ...common, ...syntheticExecution(type), error: null }
    : type === 'lineage.failed'
      ? {
          ...common,
          route_id: filters.route_id ?? 'test-route',
          adapter_name: filters.adapter_name ?? 'test_adapter',
          message_id: '00000000-0000-7000-8000-000000000000',
          correlation_id: '00000000-0000-7000-8000-000000000000',
          error: 'synthetic test failure',
        }
      : {
          ...common,
          route_id: filters.route_id ?? 'test-route',
          adapter_name: filters.adapter_name ?? 'test_adapter',
          key: `${common.execution_id}/test/test.json`,
          size: 2,
          content_type: 'application/json',
        };
  return { id, type, created_at: now.toISOString(), data, metadata: { __test__: true } };
}

/**
 * The status and outcome a synthetic execution event carries, as a real one of its type would
 * (docs/engine.md, "Outcomes"): no outcome while running, none of the work's errors.
 */
function syntheticExecution(type: WebhookEventType) {
  const status = type.slice('execution.'.length).replace('started', 'running');
  const outcome =
    status === 'completed'
      ? 'succeeded'
      : status === 'running'
        ? null
        : status === 'failed'
          ? 'failed'
          : 'empty';
  return { status, outcome, first_errors: [] };
}
