/**
 * The delivery retry policy (spec 3.5, 6.2): 2xx delivered; 5xx, 408, 429, network errors and
 * timeouts retried after 1 min, 5 min, 30 min, 2 h and 12 h; any other 4xx failed for good;
 * dead letter after the 6th failed attempt. A Retry-After answer can only lengthen a delay.
 */
export const RETRY_DELAYS_MS = [60_000, 300_000, 1_800_000, 7_200_000, 43_200_000] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** Per-attempt timeout (spec 6.2 rule 5 leaves it open). */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** Longest Retry-After honoured: a receiver cannot park a delivery for ever. */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

export type AttemptOutcome =
  | { kind: 'response'; status: number; retryAfter?: string | undefined }
  | { kind: 'network_error' }
  | { kind: 'timeout' };

export type DeliveryStatus = 'delivered' | 'pending_retry' | 'failed' | 'dead_letter';

export interface NextStep {
  status: DeliveryStatus;
  /** Set for pending_retry. */
  nextRetryAt: Date | null;
}

export function isRetryable(outcome: AttemptOutcome): boolean {
  if (outcome.kind !== 'response') return true;
  return outcome.status >= 500 || outcome.status === 408 || outcome.status === 429;
}

/** What follows attempt number `attempt` (1-based) that ended with `outcome` at `now`. */
export function nextStep(attempt: number, outcome: AttemptOutcome, now: Date): NextStep {
  if (outcome.kind === 'response' && outcome.status >= 200 && outcome.status < 300) {
    return { status: 'delivered', nextRetryAt: null };
  }
  if (!isRetryable(outcome)) return { status: 'failed', nextRetryAt: null };
  if (attempt >= MAX_ATTEMPTS) return { status: 'dead_letter', nextRetryAt: null };
  const scheduled = RETRY_DELAYS_MS[attempt - 1] as number;
  const requested = outcome.kind === 'response' ? retryAfterMs(outcome.retryAfter, now) : 0;
  return { status: 'pending_retry', nextRetryAt: new Date(now.getTime() + Math.max(scheduled, requested)) };
}

/** Retry-After as seconds or an HTTP date, in milliseconds from `now`; 0 when absent or bad. */
export function retryAfterMs(header: string | undefined, now: Date): number {
  if (!header) return 0;
  const value = header.trim();
  const milliseconds = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value) - now.getTime();
  if (!Number.isFinite(milliseconds) || milliseconds <= 0) return 0;
  return Math.min(milliseconds, MAX_RETRY_AFTER_MS);
}
