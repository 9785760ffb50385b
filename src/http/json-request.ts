/**
 * A JSON request that writes to an API (POST, PUT, DELETE) for steps that publish: through the
 * one outbound client (outbound.ts: every connection checked against the egress policy when
 * it is made), with a timeout per attempt, and with 429 and 503 answers retried after their
 * Retry-After (capped) or an exponential backoff. Other answers, errors included, are returned
 * for the caller to judge. A redirect is never followed: its 3xx is the answer, so a body and
 * its credentials are never sent on to another host.
 */
import type { EgressPolicy } from './egress-policy.js';
import { outboundRequest } from './outbound.js';
import { parseRetryAfter, sleep as wait } from './rate-limiter.js';

export interface JsonRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  headers?: Readonly<Record<string, string>>;
  body?: unknown;
}

export interface JsonResponse {
  status: number;
  body: unknown;
  /** Attempts made (1 when the first answer was kept). */
  attempts: number;
}

export interface JsonRequestOptions {
  egress: EgressPolicy;
  timeoutMs: number;
  maxAttempts: number;
  /** A longer Retry-After fails the request instead of waiting. */
  maxRetryAfterMs: number;
  signal?: AbortSignal;
  /** For tests: how to wait. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export async function jsonRequest(request: JsonRequest, options: JsonRequestOptions): Promise<JsonResponse> {
  const sleep = options.sleep ?? wait;
  for (let attempt = 1; ; attempt++) {
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const response = await outboundRequest({
      url: request.url,
      egress: options.egress,
      method: request.method,
      headers: {
        accept: 'application/json',
        ...(request.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...request.headers,
      },
      ...(request.body !== undefined ? { body: JSON.stringify(request.body) } : {}),
      signal,
    });
    const text = await response.text();
    if ((response.status === 429 || response.status === 503) && attempt < options.maxAttempts) {
      const delay = retryDelay(response.headers.get('retry-after'), attempt);
      if (delay > options.maxRetryAfterMs)
        throw new Error(
          `${request.method} ${request.url} answered ${response.status} with Retry-After ${delay} ms, over the limit`,
        );
      await sleep(delay, options.signal);
      continue;
    }
    return { status: response.status, body: parseBody(text), attempts: attempt };
  }
}

/** Retry-After (seconds or an HTTP date); absent or unreadable, 0.5 s doubled per attempt. */
function retryDelay(header: string | null, attempt: number): number {
  return parseRetryAfter(header, Date.now()) ?? 500 * 2 ** (attempt - 1);
}

function parseBody(text: string): unknown {
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
