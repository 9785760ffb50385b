/**
 * Stage outputs: objects an adapter writes under `<execution_id>/<stage>/<path>`, each with
 * its `.meta.json` sidecar holding the pipeline context. Every write raises the internal
 * `storage.object_created` event (webhooks) and publishes `storage.object.created` on the
 * broadcast topic `system.storage.events` (`/topic/system.storage.events` on STOMP), whose
 * subscribers feed the storage event stream (spec 6.4, 6.5).
 */
import type { Broker } from '../broker/broker.js';
import type { EventBus } from '../events/event-bus.js';
import type { ObjectInfo, ObjectStore } from '../storage/object-store.js';

export const STORAGE_EVENTS_TOPIC = 'system.storage.events';

export interface StageOutputContext {
  executionId: string;
  configId: string;
  routeId: string;
  stage: string;
  adapterType: string;
  messageId: string;
}

export interface StorageObjectCreated {
  event_id: string;
  event: 'storage.object.created';
  execution_id: string;
  config_id: string;
  route_id: string;
  stage: string;
  adapter_name: string;
  correlation_id: string;
  key: string;
  size: number;
  content_type: string;
  timestamp: string;
}

export type WriteObject = (
  path: string,
  body: Uint8Array | string,
  options?: { contentType?: string; metadata?: Record<string, unknown> },
) => Promise<ObjectInfo>;

export function createStageOutputWriter(
  dependencies: {
    storage: ObjectStore;
    broker: Broker;
    events: EventBus;
    now: () => Date;
    newId: () => string;
  },
  context: StageOutputContext,
): WriteObject {
  return async (relativePath, body, options = {}) => {
    const key = `${context.executionId}/${context.stage}/${relativePath}`;
    const info = await dependencies.storage.put(key, body, {
      ...(options.contentType ? { contentType: options.contentType } : {}),
      metadata: {
        ...options.metadata,
        execution_id: context.executionId,
        config_id: context.configId,
        route_id: context.routeId,
        stage: context.stage,
        adapter_name: context.adapterType,
        correlation_id: context.messageId,
      },
    });
    const shared = {
      execution_id: context.executionId,
      config_id: context.configId,
      route_id: context.routeId,
      adapter_name: context.adapterType,
      key,
      size: info.size,
      content_type: info.content_type,
      timestamp: dependencies.now().toISOString(),
    };
    dependencies.events.emit({ type: 'storage.object_created', ...shared });
    const created: StorageObjectCreated = {
      event_id: dependencies.newId(),
      event: 'storage.object.created',
      stage: context.stage,
      correlation_id: context.messageId,
      ...shared,
    };
    await dependencies.broker.publishTopic(
      STORAGE_EVENTS_TOPIC,
      new TextEncoder().encode(JSON.stringify(created)),
      {
        'content-type': 'application/json',
      },
    );
    return info;
  };
}
