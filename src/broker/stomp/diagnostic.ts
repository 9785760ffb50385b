/**
 * One-shot STOMP diagnostic (spec 4.1 mq-diagnostic): its own connection with the caller's
 * credentials, never the production broker client. Each phase (DNS, TCP, TLS, STOMP CONNECT,
 * round trips) is timed; the first failure ends the run and later phases are `skipped`.
 * The password is never echoed.
 */
import { randomUUID } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import net from 'node:net';
import tls from 'node:tls';
import { encode } from '@msgpack/msgpack';
import { type AddressGuard, createAddressGuard, publicOnly } from '../../http/address-classification.js';
import { resolveGuarded } from '../../http/guarded-lookup.js';
import { createFrameParser, encodeFrame, type Frame } from './frames.js';
import { parseStompUrl } from './stomp-broker.js';

export const MQ_DIAGNOSTIC_ALLOW_SETTING = 'WEIR_MQ_DIAGNOSTIC_ALLOWED_CIDRS';

/**
 * The address policy of diagnostic targets other than the configured broker's host: as for
 * webhook targets, only public addresses unless `allowedCidrs` lists them.
 */
export function diagnosticAddressGuard(allowedCidrs: readonly string[]): AddressGuard {
  return createAddressGuard({ permitted: publicOnly, allowedCidrs, setting: MQ_DIAGNOSTIC_ALLOW_SETTING });
}

/**
 * Which guard a diagnostic target goes through. Only the configured broker itself (its host
 * and its port) is exempt: reaching it is the endpoint's purpose. Any other port, on the
 * broker's host too, passes the address policy, or the diagnostic would scan that host's ports.
 */
export function diagnosticTargetPolicy(
  brokerUrl: string | undefined,
  allowedCidrs: readonly string[],
): (target: { host: string; port: number }) => AddressGuard | undefined {
  const guard = diagnosticAddressGuard(allowedCidrs);
  const broker = brokerUrl ? parseStompUrl(brokerUrl) : undefined;
  const brokerHost = broker ? hostKey(broker.host) : undefined;
  return (target) =>
    broker && hostKey(target.host) === brokerHost && target.port === broker.port ? undefined : guard;
}

/** A host name as compared with the broker's: lower case, no IPv6 brackets, no final dot. */
function hostKey(host: string): string {
  return host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
}

/**
 * Declared on the diagnostic's SUBSCRIBE and SEND alike (RabbitMQ refuses a queue declared
 * with other arguments): RabbitMQ deletes a diagnostic queue once it has had no consumer for a
 * minute, so the queues of diagnostics do not pile up on the broker.
 */
export const DIAGNOSTIC_QUEUE_EXPIRES_MS = 60_000;
const diagnosticQueueArguments = { 'x-expires': String(DIAGNOSTIC_QUEUE_EXPIRES_MS) };

export interface DiagnosticRequest {
  host: string;
  port: number;
  username?: string | undefined;
  password?: string | undefined;
  virtual_host?: string | undefined;
  tls: boolean;
  timeout_ms: number;
  /** Queues to round-trip a synthetic envelope through. */
  queues: string[];
  /**
   * Checks every address the host resolves to; the connection goes to a checked address.
   * Undefined for the configured broker itself (`diagnosticTargetPolicy`).
   */
  guard?: AddressGuard | undefined;
  /**
   * Opens the TCP connection to a checked address (net.connect). Tests of refused targets pass
   * one that records the attempt instead, so no test depends on the guard to stay on loopback.
   */
  connect?: ((options: { host: string; port: number }, onConnect: () => void) => net.Socket) | undefined;
}

type Phase = 'dns' | 'tcp' | 'tls' | 'stomp_connect' | 'round_trip';

interface Step {
  phase: Phase;
  status: 'ok' | 'failed' | 'skipped';
  duration_ms: number;
  detail: string | null;
}

export interface DiagnosticResult {
  success: boolean;
  host: string;
  port: number;
  steps: Step[];
  connection: {
    server: string | null;
    version: string;
    heart_beat: string | null;
    session: string | null;
  } | null;
  queues: Array<{ queue: string; ok: boolean; round_trip_ms: number | null; error: string | null }>;
  total_ms: number;
}

const allowAll: AddressGuard = { refusal: () => undefined };

const phases: Phase[] = ['dns', 'tcp', 'tls', 'stomp_connect', 'round_trip'];

export async function runStompDiagnostic(request: DiagnosticRequest): Promise<DiagnosticResult> {
  const started = performance.now();
  const steps: Step[] = [];
  const result: DiagnosticResult = {
    success: false,
    host: request.host,
    port: request.port,
    steps,
    connection: null,
    queues: [],
    total_ms: 0,
  };
  let socket: net.Socket | undefined;

  const timed = <T>(phase: Phase, work: () => Promise<T>, describe: (value: T) => string | null) =>
    timedPhase(steps, request.timeout_ms, phase, work, describe);
  let inbox: FrameInbox | undefined;
  const nextFrame = (match: (frame: Frame) => boolean) => (inbox as FrameInbox).next(match);

  try {
    const address = await timed(
      'dns',
      async () => {
        const checked = await resolveGuarded(request.host, request.guard ?? allowAll);
        if (checked.refusal !== undefined) throw new Error(`${request.host} refused: ${checked.refusal}`);
        return checked.addresses[0] as LookupAddress;
      },
      (value) => `${request.host} -> ${value.address}`,
    );
    socket = await timed(
      'tcp',
      () =>
        new Promise<net.Socket>((resolve, reject) => {
          const connect = request.connect ?? net.connect;
          const connection = connect({ host: address.address, port: request.port }, () =>
            resolve(connection),
          );
          connection.once('error', reject);
        }),
      () => `connected to ${address.address}:${request.port}`,
    );
    if (request.tls) {
      const plain = socket;
      socket = await timed(
        'tls',
        () =>
          new Promise<net.Socket>((resolve, reject) => {
            const secure = tls.connect({ socket: plain, servername: request.host }, () => resolve(secure));
            secure.once('error', reject);
          }),
        (secure) => `${(secure as tls.TLSSocket).getProtocol() ?? 'TLS'} established`,
      );
    } else {
      steps.push({ phase: 'tls', status: 'skipped', duration_ms: 0, detail: 'tls not requested' });
    }
    inbox = createFrameInbox(socket);
    const open = socket;
    const connected = await timed(
      'stomp_connect',
      async () => {
        open.write(
          encodeFrame('CONNECT', {
            'accept-version': '1.2',
            host: request.virtual_host ?? '/',
            ...(request.username !== undefined ? { login: request.username } : {}),
            ...(request.password !== undefined ? { passcode: request.password } : {}),
            'heart-beat': '0,0',
          }),
        );
        return nextFrame((frame) => frame.command === 'CONNECTED');
      },
      (frame) => `STOMP ${frame.headers.version ?? '1.2'} from ${frame.headers.server ?? 'unknown server'}`,
    );
    result.connection = {
      server: connected.headers.server ?? null,
      version: connected.headers.version ?? '1.2',
      heart_beat: connected.headers['heart-beat'] ?? null,
      session: connected.headers.session ?? null,
    };
    await timed(
      'round_trip',
      async () => {
        for (const queue of request.queues) {
          const roundTripMs = await roundTrip(open, queue, nextFrame);
          result.queues.push({ queue, ok: true, round_trip_ms: roundTripMs, error: null });
        }
        return request.queues.length;
      },
      (count) => `synthetic envelope round-tripped through ${count} queue${count === 1 ? '' : 's'}`,
    );
    result.success = true;
  } catch (error) {
    const failedQueue = request.queues[result.queues.length];
    if (steps.at(-1)?.phase === 'round_trip' && failedQueue) {
      result.queues.push({
        queue: failedQueue,
        ok: false,
        round_trip_ms: null,
        error: (error as Error).message,
      });
    }
  } finally {
    if (socket && !socket.destroyed) {
      try {
        socket.write(encodeFrame('DISCONNECT', {}));
      } catch {
        // closing anyway
      }
      socket.destroy();
    }
  }
  for (const phase of phases) {
    if (!steps.some((step) => step.phase === phase)) {
      steps.push({ phase, status: 'skipped', duration_ms: 0, detail: 'an earlier phase failed' });
    }
  }
  steps.sort((a, b) => phases.indexOf(a.phase) - phases.indexOf(b.phase));
  result.total_ms = elapsed(started);
  return result;
}

/** Runs one phase within `timeoutMs`, recording it in `steps` as ok (with `describe`) or failed. */
async function timedPhase<T>(
  steps: Step[],
  timeoutMs: number,
  phase: Phase,
  work: () => Promise<T>,
  describe: (value: T) => string | null,
): Promise<T> {
  const phaseStarted = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    const value = await Promise.race([
      work(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    steps.push({ phase, status: 'ok', duration_ms: elapsed(phaseStarted), detail: describe(value) });
    return value;
  } catch (error) {
    steps.push({
      phase,
      status: 'failed',
      duration_ms: elapsed(phaseStarted),
      detail: (error as Error).message,
    });
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

interface FrameInbox {
  /** The first frame that matches, waiting for it; throws on a STOMP ERROR or a closed socket. */
  next(match: (frame: Frame) => boolean): Promise<Frame>;
}

/** The frames the broker sends on `socket`, parsed as they come; a close reads as an ERROR frame. */
function createFrameInbox(socket: net.Socket): FrameInbox {
  const frames: Frame[] = [];
  let frameWaiter: (() => void) | undefined;
  const parser = createFrameParser((frame) => {
    frames.push(frame);
    frameWaiter?.();
  });
  socket.on('data', (chunk: Buffer) => parser.push(chunk));
  socket.on('error', () => frameWaiter?.());
  socket.on('close', () => {
    frames.push({
      command: 'ERROR',
      headers: { message: 'connection closed by the broker' },
      body: new Uint8Array(),
    });
    frameWaiter?.();
  });
  return {
    async next(match) {
      for (;;) {
        const index = frames.findIndex(match);
        if (index >= 0) return frames.splice(index, 1)[0] as Frame;
        const error = frames.find((frame) => frame.command === 'ERROR');
        if (error)
          throw new Error(`STOMP ERROR: ${error.headers.message ?? new TextDecoder().decode(error.body)}`);
        await new Promise<void>((resolve) => {
          frameWaiter = resolve;
        });
      }
    },
  };
}

/**
 * Subscribes to `queue`, sends a synthetic envelope marked with a fresh id, and waits for it to
 * come back; returns the round trip in ms. The subscription is dropped either way.
 */
async function roundTrip(
  open: net.Socket,
  queue: string,
  nextFrame: (match: (frame: Frame) => boolean) => Promise<Frame>,
): Promise<number> {
  const roundTripStarted = performance.now();
  const id = randomUUID();
  const marker = randomUUID();
  open.write(
    encodeFrame('SUBSCRIBE', {
      id,
      destination: `/queue/${queue}`,
      ack: 'auto',
      ...diagnosticQueueArguments,
    }),
  );
  const envelope = {
    message_id: marker,
    correlation_id: '',
    execution_id: 'diagnostic',
    route_id: queue,
    stage: 'mq-diagnostic',
    timestamp: new Date().toISOString(),
    payload: { synthetic: true },
    metadata: { __diagnostic__: true },
  };
  open.write(
    encodeFrame(
      'SEND',
      { destination: `/queue/${queue}`, 'x-weir-diagnostic': marker, ...diagnosticQueueArguments },
      encode(envelope),
    ),
  );
  try {
    await nextFrame((frame) => frame.command === 'MESSAGE' && frame.headers['x-weir-diagnostic'] === marker);
    return elapsed(roundTripStarted);
  } finally {
    open.write(encodeFrame('UNSUBSCRIBE', { id }));
  }
}

function elapsed(since: number): number {
  return Math.round((performance.now() - since) * 100) / 100;
}
