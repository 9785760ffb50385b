/**
 * In-process broker: queues and topics in memory, for the embedded deployment. Nothing here
 * survives a restart; the engine keeps an outbox in the database for that (lineage rows hold
 * the envelopes of unfinished messages and are republished at start-up).
 */

import { registerReadingGauge } from '../metrics/metrics.js';
import type { Broker, BrokerMessage, Headers, MessageHandler, QueueOptions, Subscription } from './broker.js';
import { redeliveryDelay } from './broker.js';

interface QueuedMessage {
  body: Uint8Array;
  headers: Headers;
  deliveryCount: number;
}

interface Consumer {
  prefetch: number;
  inFlight: number;
  handler: MessageHandler;
  active: boolean;
}

interface Queue {
  pending: QueuedMessage[];
  /** Index of the next message in `pending` (a cursor avoids O(n) shifts on long queues). */
  head: number;
  consumers: Consumer[];
  nextConsumer: number;
  scheduled: boolean;
}

/**
 * Broadcast topics in one process: every listener gets every message, and one that throws does
 * not stop the others.
 */
function createTopicListeners() {
  const topics = new Map<string, Set<(body: Uint8Array, headers: Headers) => void>>();
  return {
    async publish(topic: string, body: Uint8Array, headers: Headers = {}) {
      for (const listener of topics.get(topic) ?? []) {
        try {
          listener(body, headers);
        } catch {
          // one faulty listener must not stop the others
        }
      }
    },
    async subscribe(
      topic: string,
      listener: (body: Uint8Array, headers: Headers) => void,
    ): Promise<Subscription> {
      let listeners = topics.get(topic);
      if (!listeners) {
        listeners = new Set();
        topics.set(topic, listeners);
      }
      listeners.add(listener);
      return {
        async unsubscribe() {
          listeners.delete(listener);
        },
      };
    },
    clear: () => topics.clear(),
  };
}

export function createMemoryBroker(): Broker {
  const queues = new Map<string, Queue>();
  const topics = createTopicListeners();
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;
  // The in-process broker knows its queues' depth (RabbitMQ's is read from its own metrics).
  registerReadingGauge(
    'weir_broker_queued_messages',
    "Messages waiting in the in-process broker's queues.",
    () => {
      let waiting = 0;
      for (const queue of queues.values()) waiting += queue.pending.length - queue.head;
      return waiting;
    },
  );

  function queueNamed(name: string): Queue {
    let queue = queues.get(name);
    if (!queue) {
      queue = { pending: [], head: 0, consumers: [], nextConsumer: 0, scheduled: false };
      queues.set(name, queue);
    }
    return queue;
  }

  function schedule(queue: Queue): void {
    if (queue.scheduled || closed) return;
    queue.scheduled = true;
    setImmediate(() => {
      queue.scheduled = false;
      dispatch(queue);
    });
  }

  function dispatch(queue: Queue): void {
    while (queue.head < queue.pending.length) {
      const consumer = pickConsumer(queue);
      if (!consumer) break;
      const item = queue.pending[queue.head] as QueuedMessage;
      queue.head++;
      deliver(queue, consumer, item);
    }
    if (queue.head > 1024 && queue.head * 2 > queue.pending.length) {
      queue.pending = queue.pending.slice(queue.head);
      queue.head = 0;
    }
  }

  function deliver(queue: Queue, consumer: Consumer, item: QueuedMessage): void {
    consumer.inFlight++;
    const message = new Delivery(owner, queue, consumer, item);
    consumer.handler(message).catch(() => {
      // A handler that throws without settling gives the message back, like a lost consumer.
      void message.nack();
    });
  }

  function requeueLater(queue: Queue, item: QueuedMessage): void {
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        queue.pending.push(item);
        schedule(queue);
      },
      redeliveryDelay(item.deliveryCount - 1),
    );
    timers.add(timer);
  }

  const owner: DeliveryOwner = { schedule, requeueLater };

  return {
    kind: 'memory',

    async publish(name: string, body: Uint8Array, headers: Headers = NO_HEADERS) {
      if (closed) throw new Error('broker is closed');
      const queue = queueNamed(name);
      queue.pending.push({ body, headers, deliveryCount: 1 });
      schedule(queue);
    },

    async subscribe(name: string, options: QueueOptions, handler: MessageHandler): Promise<Subscription> {
      const queue = queueNamed(name);
      const consumer: Consumer = {
        prefetch: Math.max(1, options.prefetch),
        inFlight: 0,
        handler,
        active: true,
      };
      queue.consumers.push(consumer);
      schedule(queue);
      return {
        async unsubscribe() {
          consumer.active = false;
          queue.consumers = queue.consumers.filter((entry) => entry !== consumer);
          queue.nextConsumer = 0;
        },
      };
    },

    publishTopic: topics.publish,
    subscribeTopic: topics.subscribe,

    async check() {
      if (closed) throw new Error('broker is closed');
    },

    describeConnection() {
      return closed ? 'in-process, closed' : 'in-process';
    },

    async close() {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      queues.clear();
      topics.clear();
    },
  };
}

/** The headers of a message published without any: one object for all, never written to. */
const NO_HEADERS: Headers = Object.freeze({});

/** What a delivery calls back into its broker for. */
interface DeliveryOwner {
  schedule(queue: Queue): void;
  requeueLater(queue: Queue, item: QueuedMessage): void;
}

/**
 * One delivery of a queued message, settled once: ack and nack live on the prototype, so a
 * delivery is one object, not a message with three closures (a fan-out's 100,000 deliveries
 * were that much garbage more on the engine's busiest thread).
 */
class Delivery implements BrokerMessage {
  readonly body: Uint8Array;
  readonly headers: Headers;
  readonly deliveryCount: number;
  private settled = false;

  constructor(
    private readonly owner: DeliveryOwner,
    private readonly queue: Queue,
    private readonly consumer: Consumer,
    private readonly item: QueuedMessage,
  ) {
    this.body = item.body;
    this.headers = item.headers;
    this.deliveryCount = item.deliveryCount;
  }

  async ack(): Promise<void> {
    this.settle();
  }

  async nack(): Promise<void> {
    if (!this.settle()) return;
    this.owner.requeueLater(this.queue, { ...this.item, deliveryCount: this.item.deliveryCount + 1 });
  }

  /** False when it was settled before. */
  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    this.consumer.inFlight--;
    this.owner.schedule(this.queue);
    return true;
  }
}

function pickConsumer(queue: Queue): Consumer | undefined {
  const count = queue.consumers.length;
  for (let step = 0; step < count; step++) {
    const index = (queue.nextConsumer + step) % count;
    const consumer = queue.consumers[index] as Consumer;
    if (consumer.active && consumer.inFlight < consumer.prefetch) {
      queue.nextConsumer = (index + 1) % count;
      return consumer;
    }
  }
  return undefined;
}
