/**
 * Config fields the fetching web adapters share (names and meanings identical in each), and
 * the web client built from them.
 */
import { createHash } from 'node:crypto';
import { Type } from 'typebox';
import { egressPolicy } from '../../http/egress-policy.js';
import { createWebClient, type WebClient } from '../../http/web-client.js';
import type { Settings } from '../../settings.js';

export const fetchConfigFields = (defaults: { rateLimit: number; timeoutSeconds: number }) => ({
  rate_limit: Type.Number({
    exclusiveMinimum: 0,
    maximum: 1000,
    default: defaults.rateLimit,
    description:
      'requests per second per host; halved on 429/503 (down to a tenth) and raised again while answers are healthy',
  }),
  request_timeout: Type.Number({
    exclusiveMinimum: 0,
    maximum: 600,
    default: defaults.timeoutSeconds,
    description: 'seconds for one complete exchange (connect, headers and body)',
  }),
  obey_robots: Type.Boolean({
    default: true,
    description: 'check robots.txt (cached per host) before every request and redirect hop',
  }),
  user_agent: Type.String({
    default: '',
    maxLength: 500,
    description: 'User-Agent header; empty = Weir/<version> (+contact placeholder): set one naming you',
  }),
  max_redirects: Type.Integer({ minimum: 0, maximum: 20, default: 5, description: 'redirect hops followed' }),
  max_retries: Type.Integer({
    minimum: 0,
    maximum: 10,
    default: 2,
    description: 'extra attempts for 429 and 5xx answers, each after the wait the host asked for',
  }),
  max_retry_after: Type.Number({
    minimum: 0,
    maximum: 3600,
    default: 60,
    description: 'seconds; a longer Retry-After is not waited for and the message fails',
  }),
});

export interface FetchConfig {
  rate_limit: number;
  request_timeout: number;
  obey_robots: boolean;
  user_agent: string;
  max_redirects: number;
  max_retries: number;
  max_retry_after: number;
}

/** `settings.fetch_allowed_cidrs` opens addresses the egress policy refuses (loopback, ...). */
export function webClientFromConfig(
  config: FetchConfig,
  maxBytes: number,
  label: string,
  settings: Pick<Settings, 'fetch_allowed_cidrs'>,
): WebClient {
  return createWebClient({
    egress: egressPolicy(settings.fetch_allowed_cidrs),
    userAgent: config.user_agent,
    requestsPerSecond: config.rate_limit,
    obeyRobots: config.obey_robots,
    timeoutMs: Math.round(config.request_timeout * 1000),
    maxBytes,
    maxRedirects: config.max_redirects,
    maxRetries: config.max_retries,
    maxRetryAfterMs: Math.round(config.max_retry_after * 1000),
    label,
  });
}

export const megabytes = (value: number) => Math.floor(value * 1024 * 1024);

/** The storage file name for a URL: hex SHA-256, so a re-fetch rewrites the same object. */
export function urlHash(url: string): string {
  return createHash('sha256').update(url).digest('hex');
}

/** Compiles pattern lists at create time so a bad regex is a config error, not a message failure. */
export function compilePatterns(field: string, patterns: readonly string[]): RegExp[] {
  return patterns.map((pattern) => {
    try {
      return new RegExp(pattern);
    } catch (error) {
      throw new Error(
        `${field}: ${JSON.stringify(pattern)} is not a valid regular expression: ${(error as Error).message}`,
      );
    }
  });
}

/** Include (any, when given) and exclude (none) patterns. */
export function urlFilter(include: RegExp[], exclude: RegExp[]): (url: string) => boolean {
  return (url) =>
    (include.length === 0 || include.some((pattern) => pattern.test(url))) &&
    !exclude.some((pattern) => pattern.test(url));
}

/** The `url` field of a payload as an absolute http(s) URL, or a clear error. */
export function requireHttpUrl(payload: Record<string, unknown>, field = 'url'): string {
  const value = payload[field];
  if (typeof value !== 'string' || value === '') throw new Error(`input needs a \`${field}\` string`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`input \`${field}\` ${JSON.stringify(value.slice(0, 200))} is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`input \`${field}\` ${JSON.stringify(value.slice(0, 200))} is not an http or https URL`);
  }
  return url.href;
}
