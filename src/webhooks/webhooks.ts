/** Wiring of the webhook parts for one service instance: repository, policy, sender, dispatcher. */
import type { Database } from '../db/database.js';
import { createWebhooksRepository, type WebhooksRepository } from '../db/webhooks-repository.js';
import type { EventBus } from '../events/event-bus.js';
import type { Resolver } from '../http/guarded-lookup.js';
import { type AddressPolicy, createAddressPolicy } from './address-policy.js';
import { createDispatcher, type Dispatcher } from './dispatcher.js';
import { ATTEMPT_TIMEOUT_MS } from './retry-policy.js';
import { createSender, type Sender } from './sender.js';

/** Deliveries in flight at once per instance. */
export const DISPATCH_CONCURRENCY = 64;

export interface Webhooks {
  repository: WebhooksRepository;
  policy: AddressPolicy;
  /** How target names are resolved, on registration and at connect time. */
  lookup?: Resolver | undefined;
  /** Used by the test endpoint (synchronous, not recorded). */
  sender: Sender;
  dispatcher: Dispatcher;
  /** Stops the dispatcher (waiting for attempts in flight) and drops idle connections. */
  close(): Promise<void>;
}

export function createWebhooks(options: {
  database: Database;
  events: EventBus;
  allowedCidrs: readonly string[];
  now: () => Date;
  newId: () => string;
  onError: (error: unknown, message: string) => void;
  /** Name resolution for targets (default: the system resolver); tests inject one. */
  lookup?: Resolver | undefined;
}): Webhooks {
  const repository = createWebhooksRepository(options.database.db);
  const policy = createAddressPolicy(options.allowedCidrs);
  const senderOptions = {
    policy,
    timeoutMs: ATTEMPT_TIMEOUT_MS,
    maxSockets: DISPATCH_CONCURRENCY,
    ...(options.lookup ? { lookup: options.lookup } : {}),
  };
  const dispatcher = createDispatcher({
    repository,
    sender: createSender(senderOptions),
    events: options.events,
    now: options.now,
    newId: options.newId,
    concurrency: DISPATCH_CONCURRENCY,
    onError: options.onError,
  });
  const sender = createSender({ ...senderOptions, maxSockets: 8 });
  return {
    repository,
    policy,
    lookup: options.lookup,
    sender,
    dispatcher,
    async close() {
      await dispatcher.stop();
      sender.close();
    },
  };
}
