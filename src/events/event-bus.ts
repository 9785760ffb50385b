/**
 * Internal events (spec 6.1, 6.5). The engine raises them; webhooks, the storage event stream
 * and waiters listen. Listeners run synchronously and their errors are contained, so a faulty
 * listener can never break the operation that raised the event.
 */
import type { Outcome, OutcomeError } from '../db/execution-outcome.js';

export type ExecutionEventType =
  | 'execution.started'
  | 'execution.completed'
  | 'execution.failed'
  | 'execution.cancelled';

export interface ExecutionEvent {
  type: ExecutionEventType;
  execution_id: string;
  config_id: string;
  status: string;
  timestamp: string;
  error?: string | null;
  /** Weir's outcome of an ended execution (execution-outcome.ts); null while running. */
  outcome?: Outcome | null;
  /** The failed, then skipped, messages that explain the outcome. */
  first_errors?: OutcomeError[];
}

export interface LineageFailedEvent {
  type: 'lineage.failed';
  execution_id: string;
  config_id: string;
  route_id: string;
  adapter_name: string;
  message_id: string;
  correlation_id: string;
  error: string;
  timestamp: string;
}

export interface StorageObjectCreatedEvent {
  type: 'storage.object_created';
  execution_id: string;
  config_id: string | null;
  route_id: string | null;
  adapter_name: string | null;
  key: string;
  size: number;
  content_type: string;
  timestamp: string;
}

export type WeirEvent = ExecutionEvent | LineageFailedEvent | StorageObjectCreatedEvent;

export interface EventBus {
  emit(event: WeirEvent): void;
  /** Returns the function that removes the listener. */
  subscribe(listener: (event: WeirEvent) => void): () => void;
}

export function createEventBus(onListenerError: (error: unknown) => void = () => {}): EventBus {
  const listeners = new Set<(event: WeirEvent) => void>();
  return {
    emit(event) {
      for (const listener of listeners) {
        try {
          listener(event);
        } catch (error) {
          onListenerError(error);
        }
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
