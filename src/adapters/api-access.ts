/**
 * What steps calling a product's API with credentials share (the wiki adapters, the SharePoint
 * provider): the named secret they authenticate with, its validation finding, and a web client
 * for an API: no robots.txt, retries through a host limiter that every step calling the same
 * API shares, so the configured rate is the API's whole budget.
 */
import { egressPolicy } from '../http/egress-policy.js';
import { createHostLimiters, type HostLimiters } from '../http/rate-limiter.js';
import { createWebClient, type WebClient } from '../http/web-client.js';
import type { Settings } from '../settings.js';
import { PermanentFailure, type SettingsProblem } from './adapter.js';

/** The value of the secret `name` (settings `secrets`); a permanent failure when it is not set. */
export function requireSecret(settings: Readonly<Settings>, name: string): string {
  const value = settings.secrets[name];
  if (!value)
    throw new PermanentFailure(
      `secret ${name} is not set: set WEIR_SECRET_${name.toUpperCase()} and restart`,
    );
  return value;
}

/** Validation finding E214 when the secret `name` is not set (`field`: where the step names it). */
export function missingSecret(
  settings: Readonly<Settings>,
  name: string,
  field: ReadonlyArray<string | number>,
): SettingsProblem[] {
  if (settings.secrets[name]) return [];
  return [
    {
      code: 'E214',
      field,
      message: `secret ${name} is not set`,
      remediation: `Set WEIR_SECRET_${name.toUpperCase()} (or add it to WEIR_SECRETS) and restart.`,
    },
  ];
}

/** One limiter group per API kind and rate, for the whole process. */
const sharedLimiters = new Map<string, HostLimiters>();

function limitersFor(api: string, rate: number): HostLimiters {
  const key = `${api} ${rate}`;
  let limiters = sharedLimiters.get(key);
  if (!limiters) {
    limiters = createHostLimiters({ requestsPerSecond: rate, label: api });
    sharedLimiters.set(key, limiters);
  }
  return limiters;
}

export function apiWebClient(options: {
  /** The API kind (`wiki`, `sharepoint`): steps of one kind share its limiter. */
  api: string;
  settings: Readonly<Settings>;
  requestsPerSecond: number;
  timeoutSeconds: number;
  maxBytes: number;
  label: string;
}): WebClient {
  return createWebClient({
    egress: egressPolicy(options.settings.fetch_allowed_cidrs),
    requestsPerSecond: options.requestsPerSecond,
    // An API called with the owner's credentials, not a crawled site: robots.txt does not apply.
    obeyRobots: false,
    timeoutMs: Math.round(options.timeoutSeconds * 1000),
    maxBytes: options.maxBytes,
    maxRetries: 4,
    label: options.label,
    limiters: limitersFor(options.api, options.requestsPerSecond),
  });
}

/** A value made on first use and kept (an adapter instance's API client: its token, its connections). */
export function onFirstUse<Args extends unknown[], T>(make: (...args: Args) => T): (...args: Args) => T {
  let made: T | undefined;
  return (...args) => {
    made ??= make(...args);
    return made;
  };
}
