/**
 * One STOMP connection that stays up: it opens the socket (TCP or TLS), sends CONNECT and waits
 * for CONNECTED, keeps heart-beats both ways, and when the connection drops (broker restart, cut
 * socket, missed heart-beats, an ERROR frame) reconnects with back-off, 100 ms doubling to 5 s,
 * until closed. It knows nothing of queues or receipts: the layer above (stomp-broker.ts) gets
 * every frame after CONNECTED, writes its SUBSCRIBEs again on each new connection, and learns
 * when what waited on the old connection is lost.
 */
import net from 'node:net';
import tls from 'node:tls';
import type { Headers } from '../broker.js';
import { createFrameParser, encodeFrame, type Frame, stompErrorMessage } from './frames.js';

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

export interface StompConnectionEvents {
  /** A frame after CONNECTED, with the generation of the connection it arrived on. */
  frame(frame: Frame, generation: number): void;
  /**
   * Connected, first or again; no frame of the new connection has been delivered yet. What the
   * new connection needs first (the SUBSCRIBEs) goes out through `writeNow`.
   */
  connected(writeNow: (command: string, headers: Headers) => void): void;
  /** The connection dropped or was closed: whatever waited for an answer on it gets none. */
  disconnected(): void;
}

export interface StompConnection {
  connected(): boolean;
  /** Counts the connections made: a frame of an earlier generation came on a connection now gone. */
  generation(): number;
  /** Throws when not connected. Frames written in one tick leave together. */
  write(command: string, headers: Headers, body?: Uint8Array): void;
  /** Resolves once connected (at once if connected now); rejects once closed. */
  ready(): Promise<void>;
  /** Cut the socket as a network failure would; it reconnects. */
  drop(): void;
  /** Stop reconnecting; when connected, run `farewell` (its failure ignored), then close the socket. */
  close(farewell: () => Promise<void>): Promise<void>;
  /** Where, since when, how often it reconnected, why it last dropped. */
  describe(): string;
}

/** Connects (rejects when the first connection fails); reconnects on its own from then on. */
export async function openStompConnection(
  options: StompConnectionOptions,
  logger: StompLogger,
  events: StompConnectionEvents,
): Promise<StompConnection> {
  let socket: net.Socket | undefined;
  let connected = false;
  let closing = false;
  let generation = 0;
  let reconnectDelay = 100;
  // For describe(): since when connected, how often it reconnected, why it last dropped.
  let connectedSince: Date | undefined;
  let reconnects = 0;
  let lastDrop: string | undefined;
  let waiters: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  let heartbeatTimers: NodeJS.Timeout[] = [];
  let lastReceived = Date.now();

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

  function onConnected(current: net.Socket, frame: Frame): void {
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
    events.connected((command, headers) => current.write(encodeFrame(command, headers)));
    for (const waiter of waiters) waiter.resolve();
    waiters = [];
  }

  function onFrame(frame: Frame): void {
    lastReceived = Date.now();
    if (frame.command === 'ERROR')
      logger.warn({ message: stompErrorMessage(frame) }, 'STOMP ERROR frame; reconnecting');
    events.frame(frame, generation);
    if (frame.command === 'ERROR') socket?.destroy(); // the broker closes the connection after ERROR anyway
  }

  function connect(): Promise<void> {
    return openStompSocket(options, {
      connected: onConnected,
      frame: onFrame,
      heartbeat: () => {
        lastReceived = Date.now();
      },
      error: (current, error, handshakeOver) => {
        if (socket === current || !handshakeOver) lastDrop = error.message;
      },
      closed: (current) => {
        if (socket === current) onDisconnect();
      },
    });
  }

  function onDisconnect(): void {
    connected = false;
    lastDrop ??= 'connection closed';
    socket = undefined;
    for (const timer of heartbeatTimers) clearInterval(timer);
    heartbeatTimers = [];
    events.disconnected();
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

  await connect();

  return {
    connected: () => connected,
    generation: () => generation,
    write,
    ready,
    drop: () => socket?.destroy(),
    async close(farewell) {
      closing = true;
      for (const waiter of waiters) waiter.reject(new Error('broker is closed'));
      waiters = [];
      if (socket && connected) {
        try {
          await farewell();
        } catch {
          // closing anyway
        }
      }
      socket?.destroy();
      onDisconnect();
    },
    describe() {
      const where = `${options.host}:${options.port} (virtual host ${options.virtualHost})`;
      const history = `${reconnects} reconnect${reconnects === 1 ? '' : 's'}${lastDrop ? `, last drop: ${lastDrop}` : ''}`;
      if (closing) return `closed (was ${where})`;
      if (connected) return `connected to ${where} since ${connectedSince?.toISOString()}; ${history}`;
      return `reconnecting to ${where} (next try within ${reconnectDelay} ms); ${history}`;
    },
  };
}

interface SocketEvents {
  /** CONNECTED arrived; called before any later frame of this socket is delivered. */
  connected(socket: net.Socket, frame: Frame): void;
  frame(frame: Frame): void;
  /** A bare newline between frames: the server's heart-beat. */
  heartbeat(): void;
  /** `handshakeOver`: CONNECTED arrived or the attempt had already failed. */
  error(socket: net.Socket, error: Error, handshakeOver: boolean): void;
  closed(socket: net.Socket): void;
}

/**
 * One socket's life: TCP or TLS connect, CONNECT, and CONNECTED awaited for connectTimeoutMs.
 * Resolves when CONNECTED arrives; rejects when the server refuses, the time is up, or the socket
 * fails or closes first. Frames after that go to `events.frame` until the socket closes.
 */
function openStompSocket(options: StompConnectionOptions, events: SocketEvents): Promise<void> {
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
    const parser = createFrameParser((frame) => {
      if (settled) {
        events.frame(frame);
        return;
      }
      clearTimeout(timeout);
      if (frame.command !== 'CONNECTED') {
        fail(new Error(`STOMP connect refused: ${frame.headers.message ?? frame.command}`));
        current.destroy();
        return;
      }
      settled = true;
      events.connected(current, frame);
      resolve();
    }, events.heartbeat);
    current.on('data', (chunk: Buffer) => {
      try {
        parser.push(chunk);
      } catch (error) {
        current.destroy(error as Error);
      }
    });
    current.on('error', (error) => {
      events.error(current, error, settled);
      fail(error);
    });
    current.on('close', () => {
      clearTimeout(timeout);
      fail(new Error('STOMP connection closed'));
      events.closed(current);
    });
  });
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
