import { describe, expect, it } from 'vitest';
import { MAX_ATTEMPTS, nextStep, retryAfterMs } from './retry-policy.js';

const now = new Date('2026-11-22T00:00:00Z');
const minutes = (step: { nextRetryAt: Date | null }) =>
  step.nextRetryAt ? (step.nextRetryAt.getTime() - now.getTime()) / 60_000 : null;

describe('webhook retry policy (spec 6.2)', () => {
  it('delivers on any 2xx', () => {
    expect(nextStep(1, { kind: 'response', status: 204 }, now)).toEqual({
      status: 'delivered',
      nextRetryAt: null,
    });
  });

  it.each([
    500, 503, 408, 429,
  ])('retries %i on the 1, 5, 30, 120, 720 minute schedule, then dead-letters', (status) => {
    const delays = [1, 2, 3, 4, 5].map((attempt) =>
      minutes(nextStep(attempt, { kind: 'response', status }, now)),
    );
    expect(delays).toEqual([1, 5, 30, 120, 720]);
    expect(nextStep(MAX_ATTEMPTS, { kind: 'response', status }, now)).toEqual({
      status: 'dead_letter',
      nextRetryAt: null,
    });
    expect(MAX_ATTEMPTS).toBe(6);
  });

  it('retries network errors and timeouts', () => {
    expect(nextStep(1, { kind: 'network_error' }, now).status).toBe('pending_retry');
    expect(nextStep(2, { kind: 'timeout' }, now).status).toBe('pending_retry');
  });

  it.each([400, 401, 403, 404, 410, 422])('treats %i as terminal', (status) => {
    expect(nextStep(1, { kind: 'response', status }, now)).toEqual({ status: 'failed', nextRetryAt: null });
  });

  it('lets Retry-After lengthen a delay but never shorten it', () => {
    expect(minutes(nextStep(1, { kind: 'response', status: 429, retryAfter: '600' }, now))).toBe(10);
    expect(minutes(nextStep(3, { kind: 'response', status: 503, retryAfter: '5' }, now))).toBe(30);
    const date = new Date(now.getTime() + 90 * 60_000).toUTCString();
    expect(minutes(nextStep(1, { kind: 'response', status: 503, retryAfter: date }, now))).toBe(90);
  });

  it('caps and ignores unusable Retry-After values', () => {
    expect(retryAfterMs('99999999', now)).toBe(24 * 3_600_000);
    expect(retryAfterMs('soon', now)).toBe(0);
    expect(retryAfterMs('-5', now)).toBe(0);
  });
});
