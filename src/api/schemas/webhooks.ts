/** Webhook records (spec 2.7, 4.10); field choices in docs/webhooks.md. */
import { Type } from 'typebox';
import { WEBHOOK_EVENT_TYPES } from '../../webhooks/event-body.js';

const EventType = Type.Union(
  WEBHOOK_EVENT_TYPES.map((type) => Type.Literal(type)),
  { description: 'an event type of spec 6.1' },
);

const filterField = (description: string) =>
  Type.Optional(Type.String({ minLength: 1, maxLength: 200, description }));

export const WebhookFilters = Type.Object(
  {
    config_id: filterField('only events of this config'),
    execution_id: filterField('only events of this execution'),
    route_id: filterField('only storage and lineage events of this route'),
    adapter_name: filterField('only storage and lineage events of this adapter type'),
  },
  { $id: 'WebhookFilters', additionalProperties: false, description: 'all given filters must match (AND)' },
);

const url = Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) target of the POSTs' });
const eventTypes = Type.Array(EventType, {
  minItems: 1,
  maxItems: WEBHOOK_EVENT_TYPES.length,
  uniqueItems: true,
});
const secret = Type.String({
  minLength: 16,
  maxLength: 512,
  description: 'shared signing secret (at least 16 characters); write-only, never returned',
});

export const WebhookCreateRequest = Type.Object(
  {
    url,
    event_types: eventTypes,
    secret,
    filters: Type.Optional(Type.Ref('WebhookFilters')),
    enabled: Type.Optional(Type.Boolean({ default: true })),
  },
  { $id: 'WebhookCreateRequest', additionalProperties: false },
);

export const WebhookUpdateRequest = Type.Object(
  {
    url: Type.Optional(url),
    event_types: Type.Optional(eventTypes),
    secret: Type.Optional(secret),
    filters: Type.Optional(Type.Ref('WebhookFilters')),
  },
  {
    $id: 'WebhookUpdateRequest',
    additionalProperties: false,
    minProperties: 1,
    description: 'fields to change; filters are replaced whole',
  },
);

export const WebhookToggleRequest = Type.Object(
  { enabled: Type.Optional(Type.Boolean({ description: 'absent: flip the current state' })) },
  { $id: 'WebhookToggleRequest', additionalProperties: false },
);

export const WebhookResponse = Type.Object(
  {
    webhook_id: Type.String({ format: 'uuid' }),
    url: Type.String(),
    event_types: Type.Array(Type.String()),
    filters: Type.Ref('WebhookFilters'),
    enabled: Type.Boolean(),
    secret_hint: Type.String({
      description: 'the secret is never returned; `****` and its last 4 characters',
    }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'WebhookResponse' },
);

export const WebhookListResponse = Type.Object(
  {
    webhooks: Type.Array(Type.Ref('WebhookResponse')),
    total: Type.Integer({ minimum: 0 }),
    limit: Type.Integer(),
    offset: Type.Integer(),
  },
  { $id: 'WebhookListResponse' },
);

const nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer>>(schema: T) =>
  Type.Union([schema, Type.Null()]);

export const WebhookTestResponse = Type.Object(
  {
    success: Type.Boolean({ description: 'true when the endpoint answered 2xx' }),
    response_status: Type.Optional(nullable(Type.Integer())),
    response_body: Type.Optional(nullable(Type.String({ description: 'first 1024 characters' }))),
    error_message: Type.Optional(nullable(Type.String())),
    duration_ms: Type.Number({ minimum: 0 }),
  },
  { $id: 'WebhookTestResponse' },
);

export const DeliveryStatus = Type.Union(
  ['pending', 'pending_retry', 'delivered', 'failed', 'dead_letter'].map((status) => Type.Literal(status)),
  {
    $id: 'WebhookDeliveryStatus',
    description:
      'pending (not tried yet, or re-armed), pending_retry, delivered, failed (another 4xx, final), dead_letter (6 failed attempts)',
  },
);

export const WebhookDelivery = Type.Object(
  {
    delivery_id: Type.String({ format: 'uuid', description: 'also X-Svc-Delivery and webhook-id' }),
    webhook_id: Type.String({ format: 'uuid' }),
    event_id: Type.String(),
    event_type: Type.String(),
    timestamp: Type.String({ format: 'date-time', description: 'when the event was recorded' }),
    status: Type.Ref('WebhookDeliveryStatus'),
    response_code: nullable(Type.Integer()),
    response_body_snippet: nullable(Type.String({ description: 'first 1024 characters of the last answer' })),
    retry_count: Type.Integer({
      minimum: 0,
      description: 'retries made in the current cycle (attempts - 1)',
    }),
    attempts: Type.Integer({ minimum: 0, description: 'attempts since creation or the last manual retry' }),
    manual_retries: Type.Integer({ minimum: 0 }),
    next_retry_at: nullable(Type.String({ format: 'date-time' })),
    last_attempt_at: nullable(Type.String({ format: 'date-time' })),
    delivered_at: nullable(Type.String({ format: 'date-time' })),
    error: nullable(Type.String({ description: 'why the last attempt failed' })),
  },
  { $id: 'WebhookDelivery' },
);

export const WebhookDeliveryListResponse = Type.Object(
  {
    deliveries: Type.Array(Type.Ref('WebhookDelivery')),
    total: Type.Integer({ minimum: 0 }),
    limit: Type.Integer(),
    offset: Type.Integer(),
  },
  { $id: 'WebhookDeliveryListResponse' },
);

export const webhookSchemas = [
  WebhookFilters,
  WebhookCreateRequest,
  WebhookUpdateRequest,
  WebhookToggleRequest,
  WebhookResponse,
  WebhookListResponse,
  WebhookTestResponse,
  DeliveryStatus,
  WebhookDelivery,
  WebhookDeliveryListResponse,
];
