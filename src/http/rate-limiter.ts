/**
 * Adaptive request pacing per host. Each host gets the configured requests per second; a 429
 * or 503 halves its rate (down to a floor) and blocks the host until the server's
 * `Retry-After` (seconds or an HTTP date) has passed; a run of healthy answers raises the rate
 * again step by step up to the configured one. Slots are reserved in order, so concurrent
 * callers of one adapter instance queue behind each other rather than bursting.
 *
 * Limiter groups register themselves (weakly) so `httpHostStates()` can report every host's
 * state, e.g. for /system/metrics.
 */

export interface HostLimiterOptions {
  /** Steady rate per host. */
  requestsPerSecond: number;
  /** Floor when slowing down; default a tenth of the steady rate. */
  minRequestsPerSecond?: number;
  /** Healthy answers in a row before the rate goes up a step; default 5. */
  recoverAfter?: number;
  /** Label of the group in `httpHostStates()` (the adapter type). */
  label?: string;
  now?: () => number;
}

export interface HostState {
  limiter: string;
  host: string;
  base_rate: number;
  current_rate: number;
  /** ISO time before which no request goes to this host, or null. */
  blocked_until: string | null;
  requests: number;
  throttled: number;
}

export interface HostLimiters {
  /** Waits for this host's next slot; rejects when `signal` aborts. */
  acquire(host: string, signal?: AbortSignal): Promise<void>;
  /**
   * Records an answer. For 429/503 returns the delay (ms) the server asked for, or the
   * limiter's own backoff when it named none; otherwise 0.
   */
  report(host: string, status: number, retryAfter?: string | null): number;
  /**
   * Reads the quota headers APIs send with every answer (`X-RateLimit-Remaining` or
   * `RateLimit-Remaining` with the matching `-Reset`, Atlassian's `X-RateLimit-NearLimit`): an
   * exhausted quota blocks the host until its reset (at most `maxWaitMs`), a nearly exhausted
   * one slows the host down, before any 429.
   */
  quota(host: string, headers: Readonly<Record<string, string>>, maxWaitMs?: number): void;
  states(): HostState[];
}

interface HostEntry {
  rate: number;
  nextAt: number;
  blockedUntil: number;
  healthy: number;
  requests: number;
  throttled: number;
}

const groups = new Set<WeakRef<HostLimiters>>();

export function createHostLimiters(options: HostLimiterOptions): HostLimiters {
  const base = options.requestsPerSecond;
  if (!(base > 0)) throw new Error('requestsPerSecond must be above 0');
  const floor = Math.min(base, options.minRequestsPerSecond ?? base / 10);
  const recoverAfter = options.recoverAfter ?? 5;
  const now = options.now ?? Date.now;
  const hosts = new Map<string, HostEntry>();

  const entry = (host: string): HostEntry => {
    let found = hosts.get(host);
    if (!found) {
      found = { rate: base, nextAt: 0, blockedUntil: 0, healthy: 0, requests: 0, throttled: 0 };
      hosts.set(host, found);
    }
    return found;
  };

  const limiters: HostLimiters = {
    async acquire(host, signal) {
      const state = entry(host);
      const at = Math.max(now(), state.nextAt, state.blockedUntil);
      state.nextAt = at + 1000 / state.rate;
      state.requests++;
      await sleep(at - now(), signal);
    },
    report(host, status, retryAfter) {
      const state = entry(host);
      if (status === 429 || status === 503) {
        state.throttled++;
        state.healthy = 0;
        state.rate = Math.max(floor, state.rate / 2);
        const delay = parseRetryAfter(retryAfter, now()) ?? Math.ceil(1000 / state.rate);
        state.blockedUntil = Math.max(state.blockedUntil, now() + delay);
        return delay;
      }
      if (status < 500 && state.rate < base && ++state.healthy >= recoverAfter) {
        state.healthy = 0;
        state.rate = Math.min(base, state.rate * 1.5);
      }
      return 0;
    },
    quota(host, headers, maxWaitMs = 60_000) {
      const remaining = headers['x-ratelimit-remaining'] ?? headers['ratelimit-remaining'];
      const reset = headers['x-ratelimit-reset'] ?? headers['ratelimit-reset'];
      const state = entry(host);
      if (remaining !== undefined && Number(remaining) <= 0) {
        const wait = parseReset(reset, now());
        if (wait !== undefined)
          state.blockedUntil = Math.max(state.blockedUntil, now() + Math.min(wait, maxWaitMs));
        state.healthy = 0;
        return;
      }
      if (headers['x-ratelimit-nearlimit'] === 'true') {
        state.healthy = 0;
        state.rate = Math.max(floor, state.rate * 0.75);
      }
    },
    states() {
      const at = now();
      return [...hosts].map(([host, state]) => ({
        limiter: options.label ?? 'http',
        host,
        base_rate: base,
        current_rate: Math.round(state.rate * 1000) / 1000,
        blocked_until: state.blockedUntil > at ? new Date(state.blockedUntil).toISOString() : null,
        requests: state.requests,
        throttled: state.throttled,
      }));
    },
  };
  groups.add(new WeakRef(limiters));
  return limiters;
}

/** Every live limiter group's per-host state. */
export function httpHostStates(): HostState[] {
  const states: HostState[] = [];
  for (const reference of groups) {
    const limiters = reference.deref();
    if (limiters) states.push(...limiters.states());
    else groups.delete(reference);
  }
  return states;
}

/** `Retry-After` as milliseconds from `now`: delta seconds or an HTTP date; undefined if absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (!value) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * A quota reset as milliseconds from `now`: delta seconds (the IETF RateLimit fields), epoch
 * seconds (GitHub-style), or a date (Atlassian sends ISO 8601); undefined if unreadable.
 */
export function parseReset(value: string | undefined, now: number): number | undefined {
  if (!value) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) {
    const number = Number(text);
    return number > 1_000_000_000 ? Math.max(0, number * 1000 - now) : number * 1000;
  }
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
