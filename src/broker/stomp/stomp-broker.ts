/**
 * STOMP 1.2 broker client (RabbitMQ with rabbitmq_stomp; ActiveMQ Artemis speaks the same
 * frames). One connection per broker instance; queues are `/queue/<name>`, topics
 * `/topic/<name>`. Sends are persistent and wait for the broker's RECEIPT. Subscriptions use
 * `ack: client-individual` with a prefetch window. When the connection drops (broker restart,
 * cut socket, missed heart-beats) it reconnects with back-off and subscribes again; messages
 * unacknowledged on the old connection are redelivered by the broker.
 */
import { createHash, randomUUID } from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';
import type {
  Broker,
  BrokerMessage,
  Headers,
  MessageHandler,
  QueueOptions,
  Subscription,
} from '../broker.js';
import { redeliveryDelay } from '../broker.js';
import { createFrameParser, encodeFrame, type Frame } from './frames.js';

export interface StompConnectionOptions {
  host: string;
  port: number;
  login: string | undefined;
  passcode: string | undefined;
  virtualHost: string;
  tls: boolean;
  heartbeatMs: number;
  connectTimeoutMs: number;
  /**
   * Queues unused (no consumer) this long are deleted by RabbitMQ (`x-expires`), so queues of
   * finished executions do not pile up. Safe for unfinished ones: their queued messages are
   * kept in the lineage outbox and republished when an instance starts.
   */
  queueExpiresMs: number;
}

export interface StompLogger {
  warn(object: object, message: string): void;
}

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

export async function connectStompBroker(
  url: string,
  logger: StompLogger = { warn: () => {} },
): Promise<Broker & { connected(): boolean; dropConnection(): void }> {
  const options = parseStompUrl(url);
  // Sent on every SEND and SUBSCRIBE to a queue: a queue must always be declared alike.
  const queueArguments: Headers =
    options.queueExpiresMs > 0 ? { 'x-expires': String(options.queueExpiresMs) } : {};
  const subscriptions = new Map<string, SubscriptionEntry>();
  const receipts = new Map<string, { resolve: () => void; reject: (error: Error) => void }>();
  let socket: net.Socket | undefined;
  let connected = false;
  let closing = false;
  let generation = 0;
  let reconnectDelay = 100;
  // For describeConnection(): since when connected, how often it reconnected, why it last dropped.
  let connectedSince: Date | undefined;
  let reconnects = 0;
  let lastDrop: string | undefined;
  let waiters: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  let heartbeatTimers: NodeJS.Timeout[] = [];
  let lastReceived = Date.now();

  const nackedBefore = createNackCounter();

  let corked = false;
  function write(command: string, headers: Headers, body?: Uint8Array): void {
    if (!socket || !connected) throw new Error('STOMP connection is not open');
    // Frames written in one tick leave in one packet: many sends and acks, few syscalls.
    if (!corked) {
      corked = true;
      const current = socket;
      current.cork();
      process.nextTick(() => {
        corked = false;
        current.uncork();
      });
    }
    socket.write(encodeFrame(command, headers, body));
  }

  function ready(): Promise<void> {
    if (connected) return Promise.resolve();
    if (closing) return Promise.reject(new Error('broker is closed'));
    return new Promise((resolve, reject) => waiters.push({ resolve, reject }));
  }

  function onFrame(frame: Frame): void {
    lastReceived = Date.now();
    switch (frame.command) {
      case 'MESSAGE': {
        subscriptions.get(frame.headers.subscription ?? '')?.onMessage(frame, generation);
        break;
      }
      case 'RECEIPT': {
        const id = frame.headers['receipt-id'] ?? '';
        receipts.get(id)?.resolve();
        receipts.delete(id);
        break;
      }
      case 'ERROR': {
        const message = frame.headers.message ?? new TextDecoder().decode(frame.body);
        logger.warn({ message }, 'STOMP ERROR frame; reconnecting');
        const id = frame.headers['receipt-id'];
        if (id) {
          receipts.get(id)?.reject(new Error(`STOMP error: ${message}`));
          receipts.delete(id);
        }
        socket?.destroy(); // the broker closes the connection after ERROR anyway
        break;
      }
    }
  }

  function connect(): Promise<void> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (error: Error) => {
        if (!settled) {
          settled = true;
          reject(error);
        }
      };
      const onConnect = () => {
        current.write(
          encodeFrame('CONNECT', {
            'accept-version': '1.2',
            host: options.virtualHost,
            ...(options.login !== undefined ? { login: options.login } : {}),
            ...(options.passcode !== undefined ? { passcode: options.passcode } : {}),
            'heart-beat': `${options.heartbeatMs},${options.heartbeatMs}`,
          }),
        );
      };
      const current = options.tls
        ? tls.connect({ host: options.host, port: options.port, servername: options.host }, onConnect)
        : net.connect({ host: options.host, port: options.port }, onConnect);
      current.setNoDelay(true);
      const timeout = setTimeout(() => {
        fail(
          new Error(
            `no STOMP CONNECTED from ${options.host}:${options.port} within ${options.connectTimeoutMs} ms`,
          ),
        );
        current.destroy();
      }, options.connectTimeoutMs);
      const parser = createFrameParser(
        (frame) => {
          if (!settled) {
            clearTimeout(timeout);
            if (frame.command !== 'CONNECTED') {
              fail(new Error(`STOMP connect refused: ${frame.headers.message ?? frame.command}`));
              current.destroy();
              return;
            }
            settled = true;
            socket = current;
            connected = true;
            if (generation > 0) reconnects++;
            connectedSince = new Date();
            generation++;
            reconnectDelay = 100;
            lastReceived = Date.now();
            heartbeatTimers = startHeartbeats(
              options.heartbeatMs,
              frame.headers['heart-beat'],
              current,
              () => lastReceived,
            );
            for (const entry of subscriptions.values()) {
              current.write(
                encodeFrame('SUBSCRIBE', { id: entry.id, destination: entry.destination, ...entry.headers }),
              );
            }
            for (const waiter of waiters) waiter.resolve();
            waiters = [];
            resolve();
            return;
          }
          onFrame(frame);
        },
        () => {
          lastReceived = Date.now();
        },
      );
      current.on('data', (chunk: Buffer) => {
        try {
          parser.push(chunk);
        } catch (error) {
          current.destroy(error as Error);
        }
      });
      current.on('error', (error) => {
        if (socket === current || !settled) lastDrop = error.message;
        fail(error);
      });
      current.on('close', () => {
        clearTimeout(timeout);
        fail(new Error('STOMP connection closed'));
        if (socket === current) onDisconnect();
      });
    });
  }

  function onDisconnect(): void {
    connected = false;
    lastDrop ??= 'connection closed';
    socket = undefined;
    for (const timer of heartbeatTimers) clearInterval(timer);
    heartbeatTimers = [];
    for (const pending of receipts.values()) pending.reject(new Error('STOMP connection lost'));
    receipts.clear();
    if (!closing) scheduleReconnect();
  }

  function scheduleReconnect(): void {
    const delay = reconnectDelay;
    reconnectDelay = Math.min(reconnectDelay * 2, 5000);
    setTimeout(() => {
      if (closing) return;
      connect().catch((error: Error) => {
        logger.warn({ error: error.message }, 'STOMP reconnect failed');
        if (!connected && !socket) scheduleReconnect();
      });
    }, delay).unref();
  }

  async function sendWithReceipt(destination: string, body: Uint8Array, headers: Headers): Promise<void> {
    let lastError: Error | undefined;
    for (let attempt = 1; attempt <= PUBLISH_ATTEMPTS; attempt++) {
      await ready();
      const receipt = randomUUID();
      try {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => {
            receipts.delete(receipt);
            reject(new Error(`no RECEIPT for a send to ${destination} within ${RECEIPT_TIMEOUT_MS} ms`));
          }, RECEIPT_TIMEOUT_MS);
          receipts.set(receipt, {
            resolve: () => {
              clearTimeout(timer);
              resolve();
            },
            reject: (error) => {
              clearTimeout(timer);
              reject(error);
            },
          });
          write(
            'SEND',
            {
              destination,
              persistent: 'true',
              receipt,
              'content-type': 'application/octet-stream',
              ...headers,
            },
            body,
          );
        });
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
    const id = randomUUID();
    subscriptions.set(id, { id, destination, headers, onMessage });
    if (connected) write('SUBSCRIBE', { id, destination, ...headers });
    return {
      async unsubscribe() {
        if (!subscriptions.delete(id)) return;
        if (connected) write('UNSUBSCRIBE', { id });
      },
    };
  }

  await connect();

  return {
    kind: 'stomp',
    connected: () => connected,
    /** For tests: cut the socket as a network failure would. */
    dropConnection: () => socket?.destroy(),

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
          // An ack on a connection that has since dropped means nothing: the broker redelivers.
          const settle = (command: 'ACK' | 'NACK', id: string) => {
            if (connected && generation === frameGeneration) write(command, { id });
          };
          const message = queueMessage(frame, settle, nackedBefore);
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
      if (!connected) throw new Error(`not connected to ${options.host}:${options.port}`);
    },

    describeConnection() {
      const where = `${options.host}:${options.port} (virtual host ${options.virtualHost})`;
      const history = `${reconnects} reconnect${reconnects === 1 ? '' : 's'}${lastDrop ? `, last drop: ${lastDrop}` : ''}`;
      if (closing) return `closed (was ${where})`;
      if (connected) return `connected to ${where} since ${connectedSince?.toISOString()}; ${history}`;
      return `reconnecting to ${where} (next try within ${reconnectDelay} ms); ${history}`;
    },

    async close() {
      closing = true;
      for (const waiter of waiters) waiter.reject(new Error('broker is closed'));
      waiters = [];
      if (socket && connected) {
        try {
          const receipt = randomUUID();
          const done = new Promise<void>((resolve) => {
            receipts.set(receipt, { resolve, reject: () => resolve() });
            setTimeout(resolve, 1000).unref();
          });
          write('DISCONNECT', { receipt });
          await done;
        } catch {
          // closing anyway
        }
      }
      socket?.destroy();
      onDisconnect();
    },
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

/**
 * STOMP heart-beats as negotiated: a newline as often as the server wants one, and the socket
 * destroyed when the server's own beats stop for 2.5 of its periods. Returns the timers.
 */
function startHeartbeats(
  heartbeatMs: number,
  serverHeartbeat: string | undefined,
  socket: net.Socket,
  lastReceived: () => number,
): NodeJS.Timeout[] {
  const timers: NodeJS.Timeout[] = [];
  const [serverSends = 0, serverWants = 0] = (serverHeartbeat ?? '0,0').split(',').map(Number);
  if (heartbeatMs > 0 && serverWants > 0) {
    const every = Math.max(heartbeatMs, serverWants);
    timers.push(setInterval(() => socket.write('\n'), every).unref());
  }
  if (heartbeatMs > 0 && serverSends > 0) {
    const expect = Math.max(heartbeatMs, serverSends) * 2.5;
    timers.push(
      setInterval(() => {
        if (Date.now() - lastReceived() > expect) socket.destroy(new Error('missed STOMP heart-beats'));
      }, expect / 2).unref(),
    );
  }
  return timers;
}

/**
 * A queue frame as the engine's message: its delivery count (x-delivery-count, or `redelivered`),
 * and ack/nack settled once through `settle`. RabbitMQ requeues a NACK at once; waiting first
 * keeps a failing consumer from spinning.
 */
function queueMessage(
  frame: Frame,
  settle: (command: 'ACK' | 'NACK', ackId: string) => void,
  nackedBefore: (body: Uint8Array) => number,
): BrokerMessage {
  const ackId = frame.headers.ack ?? frame.headers['message-id'] ?? '';
  const count = frame.headers['x-delivery-count'];
  const deliveryCount =
    count !== undefined ? Number(count) + 1 : frame.headers.redelivered === 'true' ? 2 : 1;
  let settled = false;
  const settleOnce = (command: 'ACK' | 'NACK') => {
    if (settled) return;
    settled = true;
    settle(command, ackId);
  };
  return {
    body: frame.body,
    headers: frame.headers,
    deliveryCount,
    ack: async () => settleOnce('ACK'),
    nack: async () => {
      const delay = redeliveryDelay(Math.max(deliveryCount, nackedBefore(frame.body) + 1));
      await new Promise((resolve) => setTimeout(resolve, delay));
      settleOnce('NACK');
    },
  };
}
