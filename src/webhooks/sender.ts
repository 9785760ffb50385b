/**
 * One signed POST of a delivery. Both signature schemes on every request; the request goes
 * through the one outbound client (src/http/outbound.ts `sendOnce`) with the webhook address
 * policy (address-policy.ts) applied when connecting, so a name that resolves to a private
 * address at connect time (DNS rebinding) is refused as well. Redirects are not followed: a 3xx
 * is the receiver's answer. Only the first bytes of the answer are kept, as the delivery's
 * snippet.
 */
import { type Connector, createEgressPolicy, type Resolver } from '../http/egress-policy.js';
import { sendOnce } from '../http/outbound.js';
import { type AddressPolicy, WEBHOOK_TARGET_REFUSED } from './address-policy.js';
import type { AttemptOutcome } from './retry-policy.js';
import type { Signatures } from './signer.js';
import { standardWebhookHeaders, svcSignature } from './signing.js';

/** Characters of the answer stored with the delivery. */
export const SNIPPET_CHARS = 1024;
/** The User-Agent of every delivery. */
const USER_AGENT = 'Weir-Webhooks/1';
/** Bytes read before the rest of an answer is dropped (with its connection). */
const MAX_READ_BYTES = 64 * 1024;

export interface SendRequest {
  url: string;
  secret: string;
  deliveryId: string;
  eventType: string;
  /** The JSON to send, as text or as its UTF-8 bytes. */
  body: string | Uint8Array;
  /** Signing time (webhook-timestamp): the wall clock, which receivers compare with theirs. */
  timestamp: Date;
  /** Signatures made already (signer.ts) with this secret; `timestamp` is then ignored. */
  signed?: Signatures | undefined;
}

export interface SendResult {
  outcome: AttemptOutcome;
  snippet: string | null;
  error: string | null;
  durationMs: number;
}

/** The deadline's reason, told apart from the errors of the connection. */
const TIMED_OUT = new Error('the attempt timed out');

export interface Sender {
  send(request: SendRequest): Promise<SendResult>;
  close(): void;
}

export function createSender(options: {
  policy: AddressPolicy;
  timeoutMs: number;
  maxSockets: number;
  /** For tests: names resolved without DNS, and the step that dials a checked address. */
  lookup?: Resolver;
  connect?: Connector;
}): Sender {
  const egress = createEgressPolicy({
    guard: options.policy,
    label: 'webhook target',
    code: WEBHOOK_TARGET_REFUSED,
    connections: options.maxSockets,
    ...(options.lookup ? { lookup: options.lookup } : {}),
    ...(options.connect ? { connect: options.connect } : {}),
  });

  // Targets by URL, parsed once: a subscription's URL is the same on every delivery.
  const targets = new Map<string, URL>();
  function target(text: string): URL {
    let found = targets.get(text);
    if (!found) {
      found = new URL(text);
      if (found.protocol !== 'http:' && found.protocol !== 'https:') throw new Error('not an http(s) URL');
      if (targets.size >= 1024) targets.clear();
      targets.set(text, found);
    }
    return found;
  }

  async function send(request: SendRequest): Promise<SendResult> {
    const started = performance.now();
    let destination: ReturnType<typeof target>;
    try {
      destination = target(request.url);
    } catch {
      return sendResult(started, { kind: 'network_error' }, null, 'the webhook URL cannot be parsed');
    }
    // The body's bytes once: both signatures and the request use them.
    const body = typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : request.body;
    try {
      const answer = await sendOnce({
        url: destination,
        headers: deliveryHeaders(request, body),
        body,
        egress,
        timeoutMs: options.timeoutMs,
        timedOut: TIMED_OUT,
        maxReadBytes: MAX_READ_BYTES,
      });
      const text = answer.body.toString('utf8');
      return sendResult(
        started,
        { kind: 'response', status: answer.status, retryAfter: answer.retryAfter },
        text.length > SNIPPET_CHARS ? text.slice(0, SNIPPET_CHARS) : text,
        null,
      );
    } catch (error) {
      if (error === TIMED_OUT)
        return sendResult(started, { kind: 'timeout' }, null, `no answer within ${options.timeoutMs} ms`);
      return sendResult(
        started,
        { kind: 'network_error' },
        null,
        describeError(error as NodeJS.ErrnoException),
      );
    }
  }

  return {
    send,
    close() {
      void egress.close();
    },
  };
}

/** The result of an attempt started at `started` (performance.now()). */
function sendResult(
  started: number,
  outcome: AttemptOutcome,
  snippet: string | null,
  error: string | null,
): SendResult {
  return { outcome, snippet, error, durationMs: Math.round((performance.now() - started) * 100) / 100 };
}

/**
 * A delivery's headers, both signature schemes, in one object literal (the signed and the
 * unsigned case each one shape): the signatures made ahead, or made here.
 */
function deliveryHeaders(request: SendRequest, body: Uint8Array): Record<string, string> {
  const signed = request.signed;
  if (signed)
    return {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'x-svc-signature': signed.svc,
      'x-svc-event': request.eventType,
      'x-svc-delivery': request.deliveryId,
      'webhook-id': request.deliveryId,
      'webhook-timestamp': String(signed.seconds),
      'webhook-signature': signed.standard,
    };
  const standard = standardWebhookHeaders(request.secret, {
    id: request.deliveryId,
    timestamp: request.timestamp,
    rawBody: body,
  });
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-svc-signature': svcSignature(request.secret, body),
    'x-svc-event': request.eventType,
    'x-svc-delivery': request.deliveryId,
    'webhook-id': standard['webhook-id'],
    'webhook-timestamp': standard['webhook-timestamp'],
    'webhook-signature': standard['webhook-signature'],
  };
}

function describeError(error: NodeJS.ErrnoException): string {
  if (error.code === WEBHOOK_TARGET_REFUSED) return error.message;
  return error.code ? `${error.code}: ${error.message}` : error.message;
}
