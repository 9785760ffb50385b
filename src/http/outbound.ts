/**
 * The one outbound HTTP client. Every request the service makes leaves through here: the web
 * fetchers and the APIs they read (wiki, SharePoint and its token endpoint), kbase_writer and
 * the publishers (json-request.ts), the OpenAI-compatible LLM and embedding calls, and webhooks.
 * test/architecture-outbound.test.ts fails when code outside src/http/ calls fetch, undici or
 * node:http(s) itself.
 *
 * - Every connection goes through the caller's EgressPolicy dispatcher, whose connector
 *   resolves, checks and dials each address (egress-policy.ts): the policy holds at connect
 *   time for names and IP literals alike, on every hop.
 * - Nothing here follows a redirect: a 3xx is the answer (`redirect: 'manual'` for undici's
 *   fetch, and no redirect interceptor on the dispatcher). The one follower is
 *   web-client.ts `get`, which asks again here for each hop (robots.txt, pacing and the policy
 *   on every one) and sends its credentials only to the first origin. A request with a body
 *   (a publish, a token POST, a webhook) is never sent on to a redirect's target.
 */
import type { Response } from 'undici';
import { type Deadline, deadlinesOf } from '../runtime/deadlines.js';
import { type EgressPolicy, egressRefusal } from './egress-policy.js';
import { undici } from './undici.js';

export class HttpFetchError extends Error {
  override name = 'HttpFetchError';
}

/** The egress policy refused the address; nothing was sent. */
export class EgressRefused extends HttpFetchError {
  override name = 'EgressRefused';
  /** The policy answers the same on every attempt. */
  readonly permanent = true;
}

/** An answer: undici's Response (a WHATWG Response), its body not yet read. */
export type OutboundResponse = Response;

export type OutboundMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface OutboundRequest {
  method?: OutboundMethod;
  url: URL | string;
  headers?: Readonly<Record<string, string>>;
  body?: string | Uint8Array;
  egress: EgressPolicy;
  signal?: AbortSignal;
}

/** The URL of a request, parsed; http and https only. */
export function outboundUrl(target: URL | string): URL {
  let url: URL;
  try {
    url = typeof target === 'string' ? new URL(target) : target;
  } catch {
    throw new HttpFetchError(`${JSON.stringify(target)} is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new HttpFetchError(`${url.href}: only http and https URLs are requested`);
  return url;
}

/**
 * One HTTP exchange, never a redirect followed: the answer (a 3xx included) as undici's
 * Response, its body not yet read. Throws EgressRefused when the policy refuses the host (an IP
 * literal before anything is sent, a name when connecting), the abort reason when `signal`
 * aborts, and the network error otherwise.
 */
export async function outboundRequest(request: OutboundRequest): Promise<Response> {
  const url = outboundUrl(request.url);
  // The connector refuses it as well; this says so before a connection is even asked for.
  const refused = request.egress.refusal(url);
  if (refused) throw new EgressRefused(`${url.href}: ${refused}`);
  try {
    return await undici().fetch(url, {
      method: request.method ?? 'GET',
      ...(request.headers ? { headers: { ...request.headers } } : {}),
      ...(request.body !== undefined ? { body: request.body } : {}),
      redirect: 'manual',
      dispatcher: request.egress.dispatcher,
      ...(request.signal ? { signal: request.signal } : {}),
    });
  } catch (error) {
    throw refusalOf(error, url, request.egress) ?? error;
  }
}

/** An EgressRefused when `error` is the policy's refusal of a connection. */
export function refusalOf(error: unknown, url: URL, egress: EgressPolicy): EgressRefused | undefined {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause ?? error;
  const code = (cause as { code?: string })?.code;
  return code === egress.code ? new EgressRefused(`${url.href}: ${(cause as Error).message}`) : undefined;
}

/** A lean single POST (webhooks): see `sendOnce`. */
export interface LeanRequest {
  /** Not changed afterwards: its origin and path are read once per URL object. */
  url: URL;
  headers: Record<string, string>;
  body: Uint8Array;
  egress: EgressPolicy;
  /** One deadline over connect, send and reading the answer; rejects with `timedOut` then. */
  timeoutMs: number;
  timedOut: Error;
  /** Bytes of the answer read before the rest is dropped with its connection. */
  maxReadBytes: number;
}

export interface LeanAnswer {
  status: number;
  retryAfter: string | undefined;
  body: Buffer;
}

/**
 * A URL's origin and path, read once per URL object: each getter of Node's URL calls into C++
 * and makes a new string, on every delivery of a webhook sender (which keeps one URL per target).
 */
const dispatchTargets = new WeakMap<URL, { origin: string; path: string }>();
function dispatchTarget(url: URL): { origin: string; path: string } {
  let target = dispatchTargets.get(url);
  if (!target) {
    target = { origin: url.origin, path: `${url.pathname}${url.search}` };
    dispatchTargets.set(url, target);
  }
  return target;
}

/**
 * One POST through undici's handler interface rather than `fetch`: no AbortSignal, body stream
 * or async iterator per attempt (together about a tenth of a thread's time per webhook delivery
 * in bench:webhooks). The policy's dispatcher checks the connection; a 3xx is the answer.
 */
export function sendOnce(request: LeanRequest): Promise<LeanAnswer> {
  const refused = request.egress.refusal(request.url);
  if (refused) return Promise.reject(egressRefusal(request.egress, request.url.hostname, refused));
  return new Promise<LeanAnswer>((resolve, reject) => {
    const exchange = new LeanExchange(request, resolve, reject);
    // Fired before the request got a connection, the deadline settles the attempt at once and
    // the request is aborted as soon as it starts. (One timer for all attempts of this length.)
    exchange.deadline = deadlinesOf(request.timeoutMs).set(() => exchange.expire());
    const { origin, path } = dispatchTarget(request.url);
    request.egress.dispatcher.dispatch(
      {
        origin,
        path,
        method: 'POST',
        headers: request.headers,
        body: request.body,
        headersTimeout: 0,
        bodyTimeout: 0,
      },
      exchange,
    );
  });
}

/**
 * One exchange of `sendOnce`: its state and undici's handler methods on one object, the
 * methods on its prototype. (A handler object of closures with a closure to settle it was five
 * or six functions made per delivery, each one more to collect.)
 */
class LeanExchange {
  deadline: Deadline | undefined;
  private controller: { abort(reason: Error): void } | undefined;
  private settled = false;
  private status = 0;
  private retryAfter: string | undefined;
  private readonly chunks: Buffer[] = [];
  private read = 0;
  private cut = false;

  constructor(
    private readonly request: LeanRequest,
    private readonly resolve: (answer: LeanAnswer) => void,
    private readonly reject: (error: unknown) => void,
  ) {}

  expire(): void {
    this.controller?.abort(this.request.timedOut);
    this.settle(this.request.timedOut);
  }

  private settle(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.deadline?.cancel();
    if (error === undefined || this.cut)
      this.resolve({ status: this.status, retryAfter: this.retryAfter, body: Buffer.concat(this.chunks) });
    else this.reject(error);
  }

  onRequestStart(controller: { abort(reason: Error): void }): void {
    this.controller = controller;
    if (this.settled) controller.abort(this.request.timedOut);
  }

  onResponseStart(
    _controller: unknown,
    statusCode: number,
    responseHeaders: Record<string, string | string[] | undefined>,
  ): void {
    this.status = statusCode;
    const header = responseHeaders['retry-after'];
    this.retryAfter = Array.isArray(header) ? header[0] : header;
  }

  onResponseData(controller: { abort(reason: Error): void }, chunk: Buffer): void {
    this.chunks.push(chunk);
    this.read += chunk.length;
    if (this.read >= this.request.maxReadBytes && !this.cut) {
      this.cut = true;
      controller.abort(new Error('answer too long'));
    }
  }

  onResponseEnd(): void {
    this.settle(undefined);
  }

  onResponseError(_controller: unknown, error: Error): void {
    this.settle(error);
  }
}
