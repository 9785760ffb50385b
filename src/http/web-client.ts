/**
 * The outbound HTTP layer the web adapters share: robots.txt (cached per host, obeyed by
 * default and re-checked on every redirect hop), adaptive per-host pacing, a circuit breaker
 * per host (circuit-breakers.ts), bounded redirects, retries of 429/5xx after the limiter's
 * wait, timeouts and a body cap. One client per adapter
 * instance, so its limiter and robots cache live across that instance's messages.
 */
import { SERVICE_VERSION } from '../version.js';
import { type CircuitBreakers, outboundBreakers } from './circuit-breakers.js';
import type { EgressPolicy } from './egress-policy.js';
import { BodyTooLarge, EgressRefused, fetchOnce, HttpFetchError, type RawResponse } from './fetch-once.js';
import { createHostLimiters, type HostLimiters, sleep } from './rate-limiter.js';
import { allowAll, matchingRule, parseRobots, productToken, type Robots } from './robots.js';

/** `.invalid` marks the contact as a placeholder: operators set `user_agent` to name themselves. */
export const DEFAULT_USER_AGENT = `Weir/${SERVICE_VERSION} (+https://weir.invalid/crawler)`;

export interface WebClientOptions {
  userAgent?: string;
  requestsPerSecond: number;
  obeyRobots: boolean;
  timeoutMs: number;
  maxBytes: number;
  maxRedirects?: number;
  /** Extra attempts for 429 and 5xx answers. */
  maxRetries?: number;
  /** A longer `Retry-After` is not waited for: the answer is returned as it is. */
  maxRetryAfterMs?: number;
  robotsTtlMs?: number;
  /** Label for `httpHostStates()`. */
  label?: string;
  /** Circuit breakers by host; default the process's (`outboundBreakers`). */
  breakers?: CircuitBreakers;
  accept?: string;
  /** Where requests may connect (every hop, robots.txt included); see egress-policy.ts. */
  egress: EgressPolicy;
  /**
   * Host limiters shared with other clients (several adapters calling one API must share its
   * rate); default this client's own.
   */
  limiters?: HostLimiters;
}

/** Per request: `sameHost` refuses a redirect to another host than the requested URL's. */
export interface GetOptions {
  sameHost?: boolean;
  /**
   * Request headers for the requested URL's origin only (credentials): a redirect to another
   * origin (a pre-signed download host) is followed without them.
   */
  originHeaders?: Readonly<Record<string, string>>;
  /** Overrides the client's `accept`. */
  accept?: string;
}

export interface WebResponse extends RawResponse {
  /** The URL asked for; `url` is where the redirects ended. */
  requestedUrl: string;
  redirects: string[];
}

export class RobotsDisallowed extends Error {
  override name = 'RobotsDisallowed';
  readonly permanent = true;
}

export interface WebClient {
  readonly userAgent: string;
  readonly limiters: HostLimiters;
  /** GET with the policies above; throws RobotsDisallowed, HttpFetchError or the abort reason. */
  get(url: string, signal?: AbortSignal, options?: GetOptions): Promise<WebResponse>;
  readonly egress: EgressPolicy;
  /** The parsed robots.txt of a URL's origin (cached). */
  robotsFor(url: URL, signal?: AbortSignal): Promise<Robots>;
  /** Throws RobotsDisallowed when robots.txt forbids `url` (no-op when robots are not obeyed). */
  checkRobots(url: URL, signal?: AbortSignal): Promise<void>;
}

const ROBOTS_MAX_BYTES = 512 * 1024;
const UNREACHABLE_TTL_MS = 30_000;

/**
 * robots.txt per origin, loaded once per `ttlMs`. An unreachable one is asked again after
 * UNREACHABLE_TTL_MS rather than blocking the host for the whole TTL, and a cancelled load is
 * not kept for the next message.
 */
function cachedRobots(
  load: (origin: string, signal?: AbortSignal) => Promise<Robots>,
  ttlMs: number,
): (url: URL, signal?: AbortSignal) => Promise<Robots> {
  const cache = new Map<string, { robots: Promise<Robots>; expires: number }>();
  return (url, signal) => {
    const cached = cache.get(url.origin);
    if (cached && cached.expires > Date.now()) return cached.robots;
    const robots = load(url.origin, signal);
    cache.set(url.origin, { robots, expires: Date.now() + ttlMs });
    robots.then(
      (loaded) => {
        if (loaded.unreachable) cache.set(url.origin, { robots, expires: Date.now() + UNREACHABLE_TTL_MS });
      },
      () => cache.delete(url.origin),
    );
    return robots;
  };
}

export function createWebClient(options: WebClientOptions): WebClient {
  const userAgent = options.userAgent || DEFAULT_USER_AGENT;
  const agentToken = productToken(userAgent);
  const maxRedirects = options.maxRedirects ?? 5;
  const maxRetries = options.maxRetries ?? 2;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
  const robotsTtlMs = options.robotsTtlMs ?? 3_600_000;
  const limiters =
    options.limiters ??
    createHostLimiters({
      requestsPerSecond: options.requestsPerSecond,
      ...(options.label ? { label: options.label } : {}),
    });
  const breakers = options.breakers ?? outboundBreakers;

  /** One exchange through the limiter, retrying 429/5xx after the wait it asks for. */
  async function exchange(
    url: URL,
    maxBytes: number,
    accept: string | undefined,
    signal?: AbortSignal,
    headers?: Readonly<Record<string, string>>,
  ) {
    for (let attempt = 0; ; attempt++) {
      await limiters.acquire(url.host, signal);
      breakers.admit(url.host);
      let response: RawResponse;
      try {
        response = await fetchOnce(url, {
          userAgent,
          timeoutMs: options.timeoutMs,
          maxBytes,
          ...(accept ? { accept } : {}),
          ...(headers ? { headers } : {}),
          ...(signal ? { signal } : {}),
          egress: options.egress,
        });
      } catch (error) {
        // A refused address says nothing about the host's health.
        if (signal?.aborted || error instanceof EgressRefused) breakers.release(url.host);
        else breakers.record(url.host, error instanceof BodyTooLarge);
        throw error;
      }
      breakers.record(url.host, response.status < 500);
      const delay = limiters.report(url.host, response.status, response.headers['retry-after']);
      limiters.quota(url.host, response.headers, maxRetryAfterMs);
      const retryable = response.status === 429 || response.status >= 500;
      if (!retryable || attempt >= maxRetries || delay > maxRetryAfterMs) return response;
      // 429/503 wait in the limiter (blocked host); other 5xx get a short growing pause.
      if (delay === 0) await sleep(250 * 2 ** attempt, signal);
    }
  }

  async function loadRobots(origin: string, signal?: AbortSignal): Promise<Robots> {
    let url = new URL('/robots.txt', origin);
    for (let hop = 0; hop <= maxRedirects; hop++) {
      let response: RawResponse;
      try {
        response = await exchange(url, ROBOTS_MAX_BYTES, 'text/plain', signal);
      } catch (error) {
        if (signal?.aborted) throw error;
        return { ...allowAll, unreachable: (error as Error).message };
      }
      const location = response.headers.location;
      if (response.status >= 300 && response.status < 400 && location) {
        url = new URL(location, url);
        continue;
      }
      if (response.status >= 200 && response.status < 300) return parseRobots(response.body.toString('utf8'));
      if (response.status >= 400 && response.status < 500) return allowAll; // 2.3.1.3: unavailable
      return { ...allowAll, unreachable: `${url.href} answered ${response.status}` };
    }
    return allowAll; // too many redirects: treated as unavailable (2.3.1.2)
  }

  const client: WebClient = {
    userAgent,
    limiters,
    egress: options.egress,
    robotsFor: cachedRobots((origin, signal) => loadRobots(origin, signal), robotsTtlMs),
    async checkRobots(url, signal) {
      // robots.txt itself is always allowed (RFC 9309 2.2.2 implies it; rules cannot hide it).
      if (!options.obeyRobots || url.pathname === '/robots.txt') return;
      const robots = await client.robotsFor(url, signal);
      if (robots.unreachable) {
        // RFC 9309 2.3.1.4: an unreachable robots.txt means "disallow all" for now; a failure
        // (retried by the step's policy) rather than a skip, as the page may well exist.
        throw new HttpFetchError(
          `${url.href} not fetched: robots.txt is unreachable (${robots.unreachable})`,
        );
      }
      const rule = matchingRule(robots, agentToken, url.pathname + url.search);
      if (rule) {
        throw new RobotsDisallowed(
          `${url.href} is disallowed by ${url.origin}/robots.txt (Disallow: ${rule.pattern})`,
        );
      }
    },
    async get(target, signal, getOptions = {}) {
      let url: URL;
      try {
        url = new URL(target);
      } catch {
        throw new HttpFetchError(`${JSON.stringify(target)} is not an absolute URL`);
      }
      const redirects: string[] = [];
      const origin = url.origin;
      for (;;) {
        await client.checkRobots(url, signal);
        const headers = url.origin === origin ? getOptions.originHeaders : undefined;
        const response = await exchange(
          url,
          options.maxBytes,
          getOptions.accept ?? options.accept,
          signal,
          headers,
        );
        const location = response.headers.location;
        if (response.status < 300 || response.status >= 400 || !location) {
          return { ...response, requestedUrl: target, redirects };
        }
        if (redirects.length >= maxRedirects) {
          throw new HttpFetchError(`${target}: more than ${maxRedirects} redirects (last to ${location})`);
        }
        const next = new URL(location, url);
        if (getOptions.sameHost && next.host !== url.host) {
          throw new HttpFetchError(
            `${target}: redirect from ${url.host} to another host (${next.href}) refused by same_host_only`,
          );
        }
        url = next;
        redirects.push(url.href);
      }
    },
  };
  return client;
}
