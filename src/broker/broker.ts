/**
 * The broker port: point-to-point queues (each message consumed by exactly one subscriber)
 * and broadcast topics (spec 2.1 rule 3). Two implementations: in-process (default) and
 * STOMP 1.2. A message is removed only when acknowledged; a nack puts it back after a delay
 * that grows with each delivery, so a failing consumer never spins in a hot loop.
 */
export type Headers = Record<string, string>;

export interface BrokerMessage {
  readonly body: Uint8Array;
  readonly headers: Headers;
  /** 1 on first delivery; higher after a nack or a lost consumer. */
  readonly deliveryCount: number;
  ack(): Promise<void>;
  /** Give the message back for redelivery (after a back-off). */
  nack(): Promise<void>;
}

export interface Subscription {
  unsubscribe(): Promise<void>;
}

export interface QueueOptions {
  /** Unacknowledged messages this subscriber holds at most. */
  prefetch: number;
}

export type MessageHandler = (message: BrokerMessage) => Promise<void>;

export interface Broker {
  readonly kind: 'memory' | 'stomp';
  /** Persistent send: resolves once the broker has taken the message. */
  publish(queue: string, body: Uint8Array, headers?: Headers): Promise<void>;
  subscribe(queue: string, options: QueueOptions, handler: MessageHandler): Promise<Subscription>;
  publishTopic(topic: string, body: Uint8Array, headers?: Headers): Promise<void>;
  subscribeTopic(topic: string, handler: (body: Uint8Array, headers: Headers) => void): Promise<Subscription>;
  /** Throws when the broker cannot be reached (health check). */
  check(): Promise<void>;
  /** The connection's state in words, e.g. where it is connected since when (health, debug=true). */
  describeConnection(): string;
  close(): Promise<void>;
}

/** Delay before redelivering a nacked message: 50 ms doubling per delivery, at most 5 s. */
export function redeliveryDelay(deliveryCount: number): number {
  return Math.min(5000, 50 * 2 ** Math.max(0, deliveryCount - 1));
}
