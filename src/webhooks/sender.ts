/**
 * One signed POST of a delivery. Both signature schemes on every request; the connection goes
 * through an undici agent whose DNS lookup refuses forbidden addresses (address-policy.ts), so
 * a name that resolves to a private address at connect time (DNS rebinding) is refused as
 * well. Redirects are not followed. Only the first bytes of the answer are kept, as the
 * delivery's snippet.
 * undici rather than node:http: a signed POST through node:http cost about a third more of
 * this thread than through undici (docs/benchmarks.md), and the dispatcher shares this thread
 * with the service.
 */
import { Agent } from 'undici';
import { type AddressPolicy, guardedLookup, literalHostRefusal } from './address-policy.js';
import type { AttemptOutcome } from './retry-policy.js';
import type { Signatures } from './signer.js';
import { standardWebhookHeaders, svcSignature } from './signing.js';

/** Characters of the answer stored with the delivery. */
export const SNIPPET_CHARS = 1024;
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

/** What came back: enough for the retry policy and the snippet. */
interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: Buffer;
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
}): Sender {
  const agent = new Agent({
    connections: options.maxSockets,
    // Connected with the guarded lookup (net.connect / tls.connect take it from here).
    connect: { lookup: guardedLookup(options.policy) } as Agent.Options['connect'],
  });

  // Targets by URL, parsed and checked once: a subscription's URL is the same on every delivery.
  const targets = new Map<string, { origin: string; path: string; refused: string | undefined }>();
  function target(text: string) {
    let found = targets.get(text);
    if (!found) {
      const url = new URL(text);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not an http(s) URL');
      found = {
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        refused: literalHostRefusal(url, options.policy),
      };
      if (targets.size >= 1024) targets.clear();
      targets.set(text, found);
    }
    return found;
  }

  async function send(request: SendRequest): Promise<SendResult> {
    const started = performance.now();
    const finish = (outcome: AttemptOutcome, snippet: string | null, error: string | null): SendResult => ({
      outcome,
      snippet,
      error,
      durationMs: Math.round((performance.now() - started) * 100) / 100,
    });
    let destination: ReturnType<typeof target>;
    try {
      destination = target(request.url);
    } catch {
      return finish({ kind: 'network_error' }, null, 'the webhook URL cannot be parsed');
    }
    if (destination.refused)
      return finish({ kind: 'network_error' }, null, `target refused: ${destination.refused}`);
    // The body's bytes once: both signatures and the request use them.
    const body = typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : request.body;
    const signed = request.signed;
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'Weir-Webhooks/1',
      'x-svc-signature': signed ? signed.svc : svcSignature(request.secret, body),
      'x-svc-event': request.eventType,
      'x-svc-delivery': request.deliveryId,
      ...(signed
        ? {
            'webhook-id': request.deliveryId,
            'webhook-timestamp': String(signed.seconds),
            'webhook-signature': signed.standard,
          }
        : standardWebhookHeaders(request.secret, {
            id: request.deliveryId,
            timestamp: request.timestamp,
            rawBody: body,
          })),
    };
    try {
      const answer = await post(destination, headers, body);
      const text = answer.body.toString('utf8');
      return finish(
        { kind: 'response', status: answer.status, retryAfter: answer.retryAfter },
        text.length > SNIPPET_CHARS ? text.slice(0, SNIPPET_CHARS) : text,
        null,
      );
    } catch (error) {
      if (error === TIMED_OUT)
        return finish({ kind: 'timeout' }, null, `no answer within ${options.timeoutMs} ms`);
      return finish({ kind: 'network_error' }, null, describeError(error as NodeJS.ErrnoException));
    }
  }

  /**
   * One POST through undici's handler interface rather than `agent.request`: no AbortSignal,
   * body stream or async iterator per attempt (together about a tenth of this thread's time per
   * delivery in bench:webhooks). One deadline covers the whole attempt: connect, send, and
   * reading the answer. An answer longer than MAX_READ_BYTES is cut there and its connection
   * dropped.
   */
  function post(
    destination: { origin: string; path: string },
    headers: Record<string, string>,
    body: Uint8Array,
  ): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      let controller: { abort(reason: Error): void } | undefined;
      let settled = false;
      let status = 0;
      let retryAfter: string | undefined;
      const chunks: Buffer[] = [];
      let read = 0;
      let cut = false;
      const settle = (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error === undefined || cut) resolve({ status, retryAfter, body: Buffer.concat(chunks) });
        else reject(error);
      };
      // Fired before the request got a connection, the deadline settles the attempt at once and
      // the request is aborted as soon as it starts.
      const timer = setTimeout(() => {
        controller?.abort(TIMED_OUT);
        settle(TIMED_OUT);
      }, options.timeoutMs);
      agent.dispatch(
        {
          origin: destination.origin,
          path: destination.path,
          method: 'POST',
          headers,
          body,
          headersTimeout: 0,
          bodyTimeout: 0,
        },
        {
          onRequestStart(requestController) {
            controller = requestController;
            if (settled) requestController.abort(TIMED_OUT);
          },
          onResponseStart(_controller, statusCode, responseHeaders) {
            status = statusCode;
            const header = responseHeaders['retry-after'];
            retryAfter = Array.isArray(header) ? header[0] : header;
          },
          onResponseData(responseController, chunk) {
            chunks.push(chunk);
            read += chunk.length;
            if (read >= MAX_READ_BYTES && !cut) {
              cut = true;
              responseController.abort(new Error('answer too long'));
            }
          },
          onResponseEnd() {
            settle(undefined);
          },
          onResponseError(_controller, error) {
            settle(error);
          },
        },
      );
    });
  }

  return {
    send,
    close() {
      void agent.destroy();
    },
  };
}

function describeError(error: NodeJS.ErrnoException): string {
  if (error.code === 'EWEBHOOKTARGET') return error.message;
  return error.code ? `${error.code}: ${error.message}` : error.message;
}
