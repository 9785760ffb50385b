/**
 * What steps calling a product's API with credentials share (the wiki adapters, the SharePoint
 * provider, kbase_writer): the named secret they authenticate with, bound to its declared
 * origins (src/secrets.ts), its validation findings, and a web client
 * for an API: no robots.txt, retries through a host limiter that every step calling the same
 * API shares, so the configured rate is the API's whole budget.
 */
import { egressPolicy } from '../http/egress-policy.js';
import { createHostLimiters, type HostLimiters } from '../http/rate-limiter.js';
import { createWebClient, type WebClient } from '../http/web-client.js';
import { ANY_ORIGIN, originOf, originsVariable } from '../secrets.js';
import type { Settings } from '../settings.js';
import { PermanentFailure, type SettingsProblem } from './adapter.js';

/**
 * Why the secret `name` may not be sent to `url`, or undefined when it may: `url`'s origin must
 * be one the secret declares (src/secrets.ts). Validation and the run-time check share it.
 */
export function secretRefusal(settings: Readonly<Settings>, name: string, url: string): string | undefined {
  const origin = originOf(url);
  if (!origin) return `secret ${name} is sent only to http(s) URLs, not to ${url.slice(0, 200)}`;
  const declared = settings.secret_origins[name] ?? [];
  if (declared.includes(ANY_ORIGIN) || declared.includes(origin)) return undefined;
  if (declared.length === 0)
    return `secret ${name} has no declared origins, so it is not sent to ${origin} (nor anywhere): set ${originsVariable(name)}`;
  return `secret ${name} may not be sent to ${origin}: its declared origins are ${declared.join(', ')} (${originsVariable(name)})`;
}

/** A named secret that is released only for a URL of one of its declared origins. */
export interface BoundSecret {
  readonly name: string;
  /** The value, for a request to `url`; a PermanentFailure naming the secret and the origin otherwise. */
  valueFor(url: string): string;
}

/**
 * The secret `name` (settings `secrets`) bound to its origins; a permanent failure when it is
 * not set. Every place that puts the secret, or a token obtained with it, on a request asks it
 * for that request's URL, so a URL the config did not name (a next link, a stored delta link, a
 * config stored before the origins changed) cannot carry it elsewhere.
 */
export function boundSecret(settings: Readonly<Settings>, name: string): BoundSecret {
  const value = settings.secrets[name];
  if (!value)
    throw new PermanentFailure(
      `secret ${name} is not set: set WEIR_SECRET_${name.toUpperCase()} and restart`,
    );
  return {
    name,
    valueFor(url) {
      const refusal = secretRefusal(settings, name, url);
      if (refusal) throw new PermanentFailure(refusal);
      return value;
    },
  };
}

/** Where a step sends a secret (or a token obtained with it): the URL and the config field naming it. */
export interface SecretDestination {
  url: string;
  field: ReadonlyArray<string | number>;
}

/**
 * Validation findings for a step that sends the secret `name` (named at `field`) to
 * `destinations`: E214 when it is not set; E215 for each destination whose origin the secret
 * does not declare (the remediation names the setting to add); W507 when it may go anywhere.
 */
export function checkSecret(
  settings: Readonly<Settings>,
  name: string,
  field: ReadonlyArray<string | number>,
  destinations: readonly SecretDestination[],
): SettingsProblem[] {
  const variable = originsVariable(name);
  if (!settings.secrets[name])
    return [
      {
        code: 'E214',
        field,
        message: `secret ${name} is not set`,
        remediation: `Set WEIR_SECRET_${name.toUpperCase()} (or add it to WEIR_SECRETS) and ${variable}, and restart.`,
      },
    ];
  const declared = settings.secret_origins[name] ?? [];
  const used = [...new Set(destinations.map((destination) => originOf(destination.url) ?? destination.url))];
  if (declared.includes(ANY_ORIGIN))
    return [
      {
        code: 'W507',
        field,
        message: `secret ${name} may be sent to any origin (${variable}=*): whoever can write a config can send it to their own server`,
        remediation: `For development only. Set ${variable}=${used.join(',')} (the origins this config uses) and restart.`,
      },
    ];
  return destinations.flatMap((destination): SettingsProblem[] => {
    const refusal = secretRefusal(settings, name, destination.url);
    if (!refusal) return [];
    const origin = originOf(destination.url) ?? destination.url;
    return [
      {
        code: 'E215',
        field: destination.field,
        message: refusal,
        remediation:
          declared.length === 0
            ? `Set ${variable}=${used.join(',')} (the origins this config uses) and restart.`
            : `Point ${destination.field.join('.')} at a declared origin, or add ${origin} to ${variable} and restart.`,
      },
    ];
  });
}

/**
 * `web` refusing every request that carries credentials (`originHeaders`) to a URL the secret
 * may not go to: for a client that attaches a token obtained with the secret on its own
 * (the SharePoint client and its Graph bearer token), including next and delta links.
 */
export function credentialsBoundTo(web: WebClient, secret: BoundSecret): WebClient {
  return {
    ...web,
    get(url, signal, options) {
      if (options?.originHeaders) secret.valueFor(url);
      return web.get(url, signal, options);
    },
  };
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
