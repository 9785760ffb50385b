/**
 * One signed POST of a delivery. Both signature schemes on every request; the connection goes
 * through an agent whose DNS lookup refuses forbidden addresses (address-policy.ts), so a name
 * that resolves to a private address at send time (DNS rebinding) is refused as well. Redirects
 * are not followed. Only the first bytes of the answer are kept, as the delivery's snippet.
 */
import http from 'node:http';
import https from 'node:https';
import { urlToHttpOptions } from 'node:url';
import { type AddressPolicy, guardedLookup, literalHostRefusal } from './address-policy.js';
import type { AttemptOutcome } from './retry-policy.js';
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
  body: string;
  /** Signing time (webhook-timestamp): the wall clock, which receivers compare with theirs. */
  timestamp: Date;
}

export interface SendResult {
  outcome: AttemptOutcome;
  snippet: string | null;
  error: string | null;
  durationMs: number;
}

export interface Sender {
  send(request: SendRequest): Promise<SendResult>;
  close(): void;
}

export function createSender(options: {
  policy: AddressPolicy;
  timeoutMs: number;
  maxSockets: number;
}): Sender {
  const lookup = guardedLookup(options.policy);
  const agentOptions = { keepAlive: true, maxSockets: options.maxSockets, lookup };
  const agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };

  // Targets by URL, parsed and checked once: a subscription's URL is the same on every delivery.
  const targets = new Map<string, { url: URL; refused: string | undefined; options: http.RequestOptions }>();
  function target(text: string) {
    let found = targets.get(text);
    if (!found) {
      const url = new URL(text);
      found = {
        url,
        refused: literalHostRefusal(url, options.policy),
        options: urlToHttpOptions(url),
      };
      if (targets.size >= 1024) targets.clear();
      targets.set(text, found);
    }
    return found;
  }

  function send(request: SendRequest): Promise<SendResult> {
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
      return Promise.resolve(finish({ kind: 'network_error' }, null, 'the webhook URL cannot be parsed'));
    }
    const { url, refused } = destination;
    if (refused)
      return Promise.resolve(finish({ kind: 'network_error' }, null, `target refused: ${refused}`));
    const secure = url.protocol === 'https:';
    // The body's bytes once: both signatures and the request use them.
    const body = Buffer.from(request.body, 'utf8');
    const headers = {
      'content-type': 'application/json',
      'content-length': String(body.length),
      'user-agent': 'Weir-Webhooks/1',
      'x-svc-signature': svcSignature(request.secret, body),
      'x-svc-event': request.eventType,
      'x-svc-delivery': request.deliveryId,
      ...standardWebhookHeaders(request.secret, {
        id: request.deliveryId,
        timestamp: request.timestamp,
        rawBody: body,
      }),
    };
    return new Promise((resolve) => {
      let settled = false;
      const settle = (result: SendResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      const outgoing = (secure ? https : http).request({
        ...destination.options,
        method: 'POST',
        headers,
        agent: secure ? agents.https : agents.http,
      });
      // One deadline for the whole attempt: connect, send, and reading the answer.
      const timer = setTimeout(() => {
        outgoing.destroy();
        settle(finish({ kind: 'timeout' }, null, `no answer within ${options.timeoutMs} ms`));
      }, options.timeoutMs);
      outgoing.on('error', (error: NodeJS.ErrnoException) => {
        settle(finish({ kind: 'network_error' }, null, describeError(error)));
      });
      outgoing.on('response', (response) => {
        const chunks: Buffer[] = [];
        let read = 0;
        const done = () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const retryAfter = response.headers['retry-after'];
          settle(
            finish(
              { kind: 'response', status: response.statusCode ?? 0, retryAfter },
              text.length > SNIPPET_CHARS ? text.slice(0, SNIPPET_CHARS) : text,
              null,
            ),
          );
        };
        response.on('data', (chunk: Buffer) => {
          if (read < MAX_READ_BYTES) chunks.push(chunk);
          read += chunk.length;
          if (read >= MAX_READ_BYTES) {
            // A huge answer: keep what we have, drop the connection rather than read it all.
            response.destroy();
            done();
          }
        });
        response.on('end', done);
        response.on('error', done);
        response.on('aborted', done);
      });
      outgoing.end(body);
    });
  }

  return {
    send,
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

function describeError(error: NodeJS.ErrnoException): string {
  if (error.code === 'EWEBHOOKTARGET') return error.message;
  return error.code ? `${error.code}: ${error.message}` : error.message;
}
