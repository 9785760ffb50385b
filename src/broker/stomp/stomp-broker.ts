/**
 * STOMP 1.2 broker client (RabbitMQ with rabbitmq_stomp; ActiveMQ Artemis speaks the same
 * frames). One connection per broker instance; queues are `/queue/<name>`, topics
 * `/topic/<name>`. Sends are persistent and wait for the broker's RECEIPT. Subscriptions use
 * `ack: client-individual` with a prefetch window. When the connection drops (broker restart,
 * cut socket, missed heart-beats) it reconnects with back-off and subscribes again; messages
 * unacknowledged on the old connection are redelivered by the broker.
 */
import { createHash } from 'node:crypto';
import type {
  Broker,
  BrokerMessage,
  Headers,
  MessageHandler,
  QueueOptions,
  Subscription,
} from '../broker.js';
import { redeliveryDelay } from '../broker.js';
import { openStompConnection, type StompConnectionOptions, type StompLogger } from './connection.js';
import type { Frame } from './frames.js';
import { createReceiptWaiters } from './receipts.js';

export type { StompConnectionOptions, StompLogger } from './connection.js';

/** stomp://user:pass@host:61613/vhost?heartbeat_ms=10000 (stomp+ssl:// for TLS). */
export function parseStompUrl(url: string): StompConnectionOptions {
  const parsed = new URL(url);
  if (parsed.protocol !== 'stomp:' && parsed.protocol !== 'stomp+ssl:') {
    throw new Error(`unsupported broker URL scheme ${parsed.protocol} (use stomp:// or stomp+ssl://)`);
  }
  const virtualHost = decodeURIComponent(parsed.pathname.slice(1)) || '/';
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 61613),
    login: parsed.username ? decodeURIComponent(parsed.username) : undefined,
    passcode: parsed.password ? decodeURIComponent(parsed.password) : undefined,
    virtualHost,
    tls: parsed.protocol === 'stomp+ssl:',
    heartbeatMs: Number(parsed.searchParams.get('heartbeat_ms') ?? 10_000),
    connectTimeoutMs: Number(parsed.searchParams.get('connect_timeout_ms') ?? 5000),
    queueExpiresMs: Number(parsed.searchParams.get('queue_expires_ms') ?? 3_600_000),
  };
}

interface SubscriptionEntry {
  id: string;
  destination: string;
  headers: Headers;
  onMessage: (frame: Frame, generation: number) => void;
}

const RECEIPT_TIMEOUT_MS = 15_000;
const PUBLISH_ATTEMPTS = 3;
/** How long close() waits for the RECEIPT of its DISCONNECT. */
const DISCONNECT_GRACE_MS = 1000;

export async function connectStompBroker(
  url: string,
  logger: StompLogger = { warn: () => {} },
): Promise<Broker & { connected(): boolean; dropConnection(): void }> {
  const options = parseStompUrl(url);
  // Sent on every SEND and SUBSCRIBE to a queue: a queue must always be declared alike.
  const queueArguments: Headers =
    options.queueExpiresMs > 0 ? { 'x-expires': String(options.queueExpiresMs) } : {};
  const subscriptions = new Map<string, SubscriptionEntry>();
  // Subscription ids need only be unique on a connection: a counter, not a UUID. RabbitMQ
  // repeats the id three times in every MESSAGE (subscription, message-id, ack) and once in
  // every ACK; a UUID was about 140 of the 1,100 bytes a message costs on the wire.
  let subscriptionCount = 0;
  const receipts = createReceiptWaiters();
  const nackedBefore = createNackCounter();
  // One settler for every queue message: a message keeps a reference, not closures of its own.
  const settler: Settler = {
    // An ack on a connection that has since dropped means nothing: the broker redelivers.
    write(command, ackId, generation) {
      if (connection.connected() && connection.generation() === generation)
        connection.write(command, { id: ackId });
    },
    nackedBefore,
  };

  const connection = await openStompConnection(options, logger, {
    frame(frame, generation) {
      if (frame.command === 'MESSAGE')
        subscriptions.get(frame.headers.subscription ?? '')?.onMessage(frame, generation);
      else receipts.onFrame(frame);
    },
    // A new connection has no subscriptions: the broker forgot them with the old one.
    connected(writeNow) {
      for (const entry of subscriptions.values())
        writeNow('SUBSCRIBE', { id: entry.id, destination: entry.destination, ...entry.headers });
    },
    disconnected: () => receipts.connectionLost(),
  });

  async function sendWithReceipt(destination: string, body: Uint8Array, headers: Headers): Promise<void> {
    // Built once for every attempt; only the receipt changes (set last, so no header replaces it).
    const frameHeaders: Headers = {
      destination,
      persistent: 'true',
      receipt: '',
      'content-type': 'application/octet-stream',
      ...headers,
    };
    const write = (receipt: string) => {
      frameHeaders.receipt = receipt;
      connection.write('SEND', frameHeaders, body);
    };
    let lastError: Error | undefined;
    for (let attempt = 1; attempt <= PUBLISH_ATTEMPTS; attempt++) {
      if (!connection.connected()) await connection.ready();
      try {
        await receipts.send(write, `a send to ${destination}`, RECEIPT_TIMEOUT_MS);
        return;
      } catch (error) {
        // Lost with the connection: send again once reconnected. A send that reached the broker
        // before the receipt was lost becomes a duplicate, which consumers tolerate.
        lastError = error as Error;
      }
    }
    throw lastError ?? new Error('send failed');
  }

  function addSubscription(destination: string, headers: Headers, onMessage: SubscriptionEntry['onMessage']) {
    const id = `s${++subscriptionCount}`;
    subscriptions.set(id, { id, destination, headers, onMessage });
    if (connection.connected()) connection.write('SUBSCRIBE', { id, destination, ...headers });
    return {
      async unsubscribe() {
        if (!subscriptions.delete(id)) return;
        if (connection.connected()) connection.write('UNSUBSCRIBE', { id });
      },
    };
  }

  return {
    kind: 'stomp',
    connected: () => connection.connected(),
    /** For tests: cut the socket as a network failure would. */
    dropConnection: () => connection.drop(),

    publish: (queue, body, headers = {}) =>
      sendWithReceipt(`/queue/${queue}`, body, { ...queueArguments, ...headers }),

    async subscribe(
      queue: string,
      queueOptions: QueueOptions,
      handler: MessageHandler,
    ): Promise<Subscription> {
      const prefetch = String(Math.max(1, queueOptions.prefetch));
      return addSubscription(
        `/queue/${queue}`,
        { ack: 'client-individual', 'prefetch-count': prefetch, ...queueArguments },
        (frame, frameGeneration) => {
          const message = new QueueMessage(frame, frameGeneration, settler);
          handler(message).catch(() => void message.nack());
        },
      );
    },

    publishTopic: (topic, body, headers = {}) => sendWithReceipt(`/topic/${topic}`, body, headers),

    async subscribeTopic(topic, listener) {
      return addSubscription(`/topic/${topic}`, { ack: 'auto' }, (frame) => {
        try {
          listener(frame.body, frame.headers);
        } catch {
          // a faulty listener must not break the connection
        }
      });
    },

    async check() {
      if (!connection.connected()) throw new Error(`not connected to ${options.host}:${options.port}`);
    },

    describeConnection: () => connection.describe(),

    close: () =>
      connection.close(() =>
        receipts.sendAndWaitAtMost(
          (receipt) => connection.write('DISCONNECT', { receipt }),
          DISCONNECT_GRACE_MS,
        ),
      ),
  };
}

/**
 * Classic RabbitMQ queues send no x-delivery-count, only `redelivered`: nacks are counted here
 * by body (a message's bytes are the same on every delivery), so the wait before a redelivery
 * still grows. Bounded: cleared when full (the counts are only a back-off hint). The counter
 * returns how often the body was nacked before.
 */
function createNackCounter(): (body: Uint8Array) => number {
  const nacks = new Map<string, number>();
  return (body) => {
    const key = createHash('sha1').update(body).digest('base64');
    const count = nacks.get(key) ?? 0;
    if (nacks.size >= 10_000) nacks.clear();
    nacks.set(key, count + 1);
    return count;
  };
}

interface Settler {
  /** Writes an ACK or NACK, unless the frame's connection (its generation) is gone. */
  write(command: 'ACK' | 'NACK', ackId: string, generation: number): void;
  nackedBefore(body: Uint8Array): number;
}

/**
 * A queue frame as the engine's message: its delivery count (x-delivery-count, or `redelivered`),
 * and ack/nack settled once. RabbitMQ requeues a NACK at once; waiting first keeps a failing
 * consumer from spinning. A class: one object a delivery, its methods shared.
 */
class QueueMessage implements BrokerMessage {
  readonly body: Uint8Array;
  readonly headers: Headers;
  readonly deliveryCount: number;
  private settled = false;

  constructor(
    frame: Frame,
    private readonly generation: number,
    private readonly settler: Settler,
  ) {
    this.body = frame.body;
    this.headers = frame.headers;
    const count = frame.headers['x-delivery-count'];
    this.deliveryCount =
      count !== undefined ? Number(count) + 1 : frame.headers.redelivered === 'true' ? 2 : 1;
  }

  async ack(): Promise<void> {
    this.settle('ACK');
  }

  async nack(): Promise<void> {
    const delay = redeliveryDelay(Math.max(this.deliveryCount, this.settler.nackedBefore(this.body) + 1));
    await new Promise((resolve) => setTimeout(resolve, delay));
    this.settle('NACK');
  }

  private settle(command: 'ACK' | 'NACK'): void {
    if (this.settled) return;
    this.settled = true;
    this.settler.write(command, this.headers.ack ?? this.headers['message-id'] ?? '', this.generation);
  }
}
