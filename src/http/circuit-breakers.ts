/**
 * Circuit breakers by domain (host) for outbound requests of the web adapters, reported by
 * GET /system/metrics (spec 4.1). A host that fails `failureThreshold` times in a row (no
 * answer, a timeout, or a 5xx) is *open*: requests to it fail at once for `openMs`, instead of
 * each waiting out its timeout and retries. Then it is *half open*: one trial request goes
 * through; an answer below 500 closes it, a failure opens it again. 4xx answers (429
 * included: the rate limiter paces those) count as the host working.
 * One registry per process by default, shared by every adapter instance: a host that is down
 * is down for the crawler and the PDF fetcher alike.
 */

/** Hosts with failures remembered at once. */
const MAX_TRACKED_HOSTS = 10_000;

export type BreakerState = 'closed' | 'open' | 'half_open';

export interface BreakerStatus {
  state: BreakerState;
  consecutive_failures: number;
  /** When it last opened (ISO), or null while it has never opened since it last closed. */
  opened_at: string | null;
}

export class CircuitOpen extends Error {
  override name = 'CircuitOpen';
}

export interface CircuitBreakers {
  /** Throws CircuitOpen when `host` is open (or half open with its trial already out). */
  admit(host: string): void;
  /** The outcome of an admitted request: true for an answer below 500. */
  record(host: string, healthy: boolean): void;
  /** An admitted request ended without telling anything about the host (the caller gave up). */
  release(host: string): void;
  states(): Record<string, BreakerStatus>;
}

interface Breaker {
  failures: number;
  openedAt: number | undefined;
  trialOut: boolean;
}

export function createCircuitBreakers(
  options: { failureThreshold?: number; openMs?: number; now?: () => number } = {},
): CircuitBreakers {
  const threshold = options.failureThreshold ?? 5;
  const openMs = options.openMs ?? 30_000;
  const now = options.now ?? Date.now;
  const breakers = new Map<string, Breaker>();

  const stateOf = (breaker: Breaker): BreakerState => {
    if (breaker.openedAt === undefined) return 'closed';
    return now() - breaker.openedAt >= openMs ? 'half_open' : 'open';
  };

  return {
    admit(host) {
      const breaker = breakers.get(host);
      if (!breaker) return;
      const state = stateOf(breaker);
      if (state === 'closed') return;
      if (state === 'half_open' && !breaker.trialOut) {
        breaker.trialOut = true;
        return;
      }
      const until = new Date((breaker.openedAt as number) + openMs).toISOString();
      throw new CircuitOpen(
        `${host}: circuit open after ${breaker.failures} failures in a row (next trial after ${until})`,
      );
    },
    record(host, healthy) {
      if (healthy) {
        // Closed again; hosts that never failed are not tracked.
        breakers.delete(host);
        return;
      }
      let breaker = breakers.get(host);
      if (!breaker) {
        // Bounded: a crawl meeting many dead hosts forgets the longest-tracked first.
        if (breakers.size >= MAX_TRACKED_HOSTS) breakers.delete(breakers.keys().next().value as string);
        breaker = { failures: 0, openedAt: undefined, trialOut: false };
        breakers.set(host, breaker);
      }
      breaker.failures++;
      const trialFailed = breaker.trialOut;
      breaker.trialOut = false;
      if (trialFailed || breaker.failures >= threshold) breaker.openedAt = now();
    },
    release(host) {
      const breaker = breakers.get(host);
      if (breaker) breaker.trialOut = false;
    },
    states() {
      const states: Record<string, BreakerStatus> = {};
      for (const [host, breaker] of breakers)
        states[host] = {
          state: stateOf(breaker),
          consecutive_failures: breaker.failures,
          opened_at: breaker.openedAt === undefined ? null : new Date(breaker.openedAt).toISOString(),
        };
      return states;
    },
  };
}

/** The process's registry, used by the web adapters and reported by /system/metrics. */
export const outboundBreakers: CircuitBreakers = createCircuitBreakers();
