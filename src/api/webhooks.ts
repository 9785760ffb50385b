/**
 * Webhooks group (spec 4.10): register, list, partial update, delete (with the delivery
 * history), toggle, test, list deliveries by status, retry a delivery. Targets are checked
 * against the SSRF policy on registration and on every URL change (400), and again by the
 * dispatcher at connect time. Secrets are write-only: answers carry a `secret_hint`.
 */
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import type { DeliveryRow, SubscriptionRow } from '../db/webhooks-repository.js';
import { AppError } from '../errors.js';
import { testEventBody, type WebhookEventType, type WebhookFilters } from '../webhooks/event-body.js';
import { checkWebhookTarget } from '../webhooks/target-check.js';
import type { Webhooks } from '../webhooks/webhooks.js';
import type { ApiContext } from './context.js';
import { errorResponses, pageQuery } from './schemas/common.js';
import type { WebhookCreateRequest, WebhookToggleRequest, WebhookUpdateRequest } from './schemas/webhooks.js';

const WebhookParams = Type.Object({ webhook_id: Type.String({ format: 'uuid' }) });
const DeliveryParams = Type.Object({
  webhook_id: Type.String({ format: 'uuid' }),
  delivery_id: Type.String({ format: 'uuid' }),
});
const ListQuery = Type.Object({
  ...pageQuery(),
});
const DeliveriesQuery = Type.Object({
  status: Type.Optional(Type.Ref('WebhookDeliveryStatus')),
  ...pageQuery(),
});

type WebhookParams = Static<typeof WebhookParams>;

const iso = (value: Date | null) => (value ? value.toISOString() : null);

export function presentWebhook(row: SubscriptionRow) {
  return {
    webhook_id: row.webhook_id,
    url: row.url,
    event_types: row.event_types,
    filters: row.filters,
    enabled: row.enabled,
    secret_hint: `****${row.secret.slice(-4)}`,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function presentDelivery(row: DeliveryRow) {
  return {
    delivery_id: row.delivery_id,
    webhook_id: row.webhook_id,
    event_id: row.event_id,
    event_type: row.event_type,
    timestamp: row.created_at.toISOString(),
    status: row.status,
    response_code: row.response_status,
    response_body_snippet: row.response_snippet,
    retry_count: Math.max(row.attempts - 1, 0),
    attempts: row.attempts,
    manual_retries: row.manual_retries,
    next_retry_at: iso(row.next_attempt_at),
    last_attempt_at: iso(row.last_attempt_at),
    delivered_at: iso(row.delivered_at),
    error: row.error,
  };
}

/** Drops empty filter values so `{}` and absent mean "no filter". */
function cleanFilters(filters: WebhookFilters | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(filters ?? {}).filter(([, value]) => typeof value === 'string'));
}

export async function webhookRoutes(
  app: FastifyInstance,
  context: ApiContext,
  webhooks: Webhooks | undefined,
): Promise<void> {
  const require = () => requireWebhooks(webhooks);

  app.post<{ Body: Static<typeof WebhookCreateRequest> }>(
    '/webhooks',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Register a webhook subscription (the target must pass the address policy)',
        body: Type.Ref('WebhookCreateRequest'),
        response: { 201: Type.Ref('WebhookResponse'), ...errorResponses(400, 422, 503) },
      },
    },
    async (request, reply) => {
      const parts = require();
      const body = request.body;
      await assertTarget(body.url, parts);
      const row = await parts.repository.createSubscription({
        webhook_id: context.newId(),
        url: body.url,
        secret: body.secret,
        event_types: body.event_types,
        filters: cleanFilters(body.filters as WebhookFilters | undefined),
        enabled: body.enabled ?? true,
        now: context.now(),
      });
      return reply
        .status(201)
        .header('location', `/api/v1/webhooks/${row.webhook_id}`)
        .send(presentWebhook(row));
    },
  );

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/webhooks',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'List webhook subscriptions, oldest first',
        querystring: ListQuery,
        response: { 200: Type.Ref('WebhookListResponse'), ...errorResponses(422, 503) },
      },
    },
    async (request) => {
      const { limit, offset } = request.query;
      const page = await require().repository.listSubscriptions({ limit, offset });
      return { webhooks: page.rows.map(presentWebhook), total: page.total, limit, offset };
    },
  );

  app.patch<{ Params: WebhookParams; Body: Static<typeof WebhookUpdateRequest> }>(
    '/webhooks/:webhook_id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Change url, event types, secret or filters of a subscription',
        params: WebhookParams,
        body: Type.Ref('WebhookUpdateRequest'),
        response: { 200: Type.Ref('WebhookResponse'), ...errorResponses(400, 404, 422, 503) },
      },
    },
    async (request) => {
      const parts = require();
      const { webhook_id } = request.params;
      await subscriptionOf(parts, webhook_id);
      const body = request.body;
      if (body.url !== undefined) await assertTarget(body.url, parts);
      const row = await parts.repository.updateSubscription(
        webhook_id,
        {
          url: body.url,
          secret: body.secret,
          event_types: body.event_types,
          filters: body.filters === undefined ? undefined : cleanFilters(body.filters as WebhookFilters),
        },
        context.now(),
      );
      if (!row) throw new AppError('webhook_not_found', `webhook ${webhook_id} not found`);
      parts.dispatcher.subscriptionsChanged();
      return presentWebhook(row);
    },
  );

  app.delete<{ Params: WebhookParams }>(
    '/webhooks/:webhook_id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Delete a subscription and its delivery history',
        params: WebhookParams,
        response: { 204: Type.Null({ description: 'deleted' }), ...errorResponses(404, 422, 503) },
      },
    },
    async (request, reply) => {
      const { webhook_id } = request.params;
      const parts = require();
      if (!(await parts.repository.deleteSubscription(webhook_id))) {
        throw new AppError('webhook_not_found', `webhook ${webhook_id} not found`);
      }
      parts.dispatcher.subscriptionsChanged();
      return reply.status(204).send();
    },
  );

  app.post<{ Params: WebhookParams; Body: Static<typeof WebhookToggleRequest> | undefined }>(
    '/webhooks/:webhook_id/toggle',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Enable or disable a subscription (no body: flip); disabled ones record and send nothing',
        params: WebhookParams,
        body: Type.Union([Type.Ref('WebhookToggleRequest'), Type.Null()]),
        response: { 200: Type.Ref('WebhookResponse'), ...errorResponses(404, 422, 503) },
      },
    },
    async (request) => {
      const parts = require();
      const { webhook_id } = request.params;
      const current = await subscriptionOf(parts, webhook_id);
      const enabled = request.body?.enabled ?? !current.enabled;
      const row = await parts.repository.setEnabled(webhook_id, enabled, context.now());
      if (!row) throw new AppError('webhook_not_found', `webhook ${webhook_id} not found`);
      parts.dispatcher.subscriptionsChanged();
      if (enabled) parts.dispatcher.wake();
      return presentWebhook(row);
    },
  );

  webhookDeliveryRoutes(app, context, require);
}

function requireWebhooks(webhooks: Webhooks | undefined): Webhooks {
  if (!webhooks)
    throw new AppError('database_unavailable', 'webhooks need the database, which is not available');
  return webhooks;
}

async function assertTarget(url: string, parts: Webhooks): Promise<void> {
  const problem = await checkWebhookTarget(url, parts.policy, parts.lookup);
  if (problem) {
    throw new AppError(
      problem.kind === 'refused' ? 'webhook_target_refused' : 'webhook_url_invalid',
      problem.message,
    );
  }
}

async function subscriptionOf(parts: Webhooks, webhookId: string): Promise<SubscriptionRow> {
  const row = await parts.repository.findSubscription(webhookId);
  if (!row) throw new AppError('webhook_not_found', `webhook ${webhookId} not found`);
  return row;
}

/** Test sends, the delivery history of a subscription, and the manual retry of one delivery. */
function webhookDeliveryRoutes(app: FastifyInstance, context: ApiContext, require: () => Webhooks): void {
  app.post<{ Params: WebhookParams }>(
    '/webhooks/:webhook_id/test',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Send a synthetic event (metadata.__test__ = true) now and report the answer',
        params: WebhookParams,
        response: { 200: Type.Ref('WebhookTestResponse'), ...errorResponses(404, 422, 503) },
      },
    },
    async (request) => {
      const parts = require();
      const row = await subscriptionOf(parts, request.params.webhook_id);
      const type = row.event_types[0] as WebhookEventType;
      const body = testEventBody(type, context.newId(), context.now(), row.filters);
      const result = await parts.sender.send({
        url: row.url,
        secret: row.secret,
        deliveryId: context.newId(),
        eventType: type,
        body: JSON.stringify(body),
        timestamp: new Date(),
      });
      const status = result.outcome.kind === 'response' ? result.outcome.status : null;
      const success = status !== null && status >= 200 && status < 300;
      return {
        success,
        response_status: status,
        response_body: result.snippet,
        error_message: result.error ?? (success ? null : `HTTP ${status}`),
        duration_ms: result.durationMs,
      };
    },
  );

  app.get<{ Params: WebhookParams; Querystring: Static<typeof DeliveriesQuery> }>(
    '/webhooks/:webhook_id/deliveries',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Deliveries of a subscription, newest first, optionally by status',
        params: WebhookParams,
        querystring: DeliveriesQuery,
        response: { 200: Type.Ref('WebhookDeliveryListResponse'), ...errorResponses(404, 422, 503) },
      },
    },
    async (request) => {
      const parts = require();
      await subscriptionOf(parts, request.params.webhook_id);
      const { status, limit, offset } = request.query;
      const page = await parts.repository.listDeliveries(request.params.webhook_id, {
        status: status as DeliveryRow['status'] | undefined,
        limit,
        offset,
      });
      return { deliveries: page.rows.map(presentDelivery), total: page.total, limit, offset };
    },
  );

  app.post<{ Params: Static<typeof DeliveryParams> }>(
    '/webhooks/:webhook_id/deliveries/:delivery_id/retry',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Re-arm a delivery: due now with a fresh cycle of 6 attempts',
        params: DeliveryParams,
        response: { 200: Type.Ref('WebhookDelivery'), ...errorResponses(404, 422, 503) },
      },
    },
    async (request) => {
      const parts = require();
      const { webhook_id, delivery_id } = request.params;
      const row = await parts.repository.rearm(webhook_id, delivery_id, context.now());
      if (!row) {
        throw new AppError(
          'webhook_delivery_not_found',
          `delivery ${delivery_id} of webhook ${webhook_id} not found`,
        );
      }
      parts.dispatcher.wake();
      return presentDelivery(row);
    },
  );
}
