/**
 * The connection settings every wiki_ step takes: which product, where, and the name of the
 * secret holding the token (never the token itself: pipeline YAML is stored and shown).
 */
import { type Static, Type } from 'typebox';
import { egressPolicy } from '../../http/egress-policy.js';
import { createHostLimiters, type HostLimiters } from '../../http/rate-limiter.js';
import { createWebClient } from '../../http/web-client.js';
import type { Settings } from '../../settings.js';
import { type ConfluenceClient, createConfluenceClient } from '../../wiki/confluence.js';
import { PermanentFailure, type SettingsProblem } from '../adapter.js';

export const wikiConnectionFields = {
  provider: Type.Union([Type.Literal('confluence_cloud'), Type.Literal('confluence_datacenter')], {
    default: 'confluence_cloud',
    description:
      '`confluence_cloud` (REST v2, https://<site>.atlassian.net) or `confluence_datacenter` (REST v1 of Confluence Data Center or Server)',
  }),
  base_url: Type.String({
    pattern: '^https?://',
    description: 'the site (Cloud: https://<site>.atlassian.net, /wiki optional) or the Data Center base URL',
  }),
  username: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        'Basic auth user (the Atlassian account e-mail on Cloud); absent = the token is a Bearer personal access token',
    }),
  ),
  token_secret: Type.String({
    pattern: '^[a-z0-9_]+$',
    description:
      'name of the secret holding the API token or personal access token (settings `secrets`: env WEIR_SECRET_<NAME>)',
  }),
  rate_limit: Type.Number({
    exclusiveMinimum: 0,
    maximum: 1000,
    default: 10,
    description: 'requests per second to the wiki; 429 and 503 slow it down and wait for Retry-After',
  }),
  request_timeout: Type.Number({
    exclusiveMinimum: 0,
    maximum: 600,
    default: 30,
    description: 'seconds per request',
  }),
};

const connectionSchema = Type.Object(wikiConnectionFields);
export type WikiConnectionConfig = Static<typeof connectionSchema>;

/**
 * One limiter group per configured rate, shared by every wiki step of the process: the
 * crawler, the page fetcher and the attachment fetcher call the same wiki, whose rate limit
 * is one budget.
 */
const sharedLimiters = new Map<number, HostLimiters>();

export function wikiLimiters(rate: number): HostLimiters {
  let limiters = sharedLimiters.get(rate);
  if (!limiters) {
    limiters = createHostLimiters({ requestsPerSecond: rate, label: 'wiki' });
    sharedLimiters.set(rate, limiters);
  }
  return limiters;
}

/** A client made on first use and kept by the adapter instance (its token, its connections). */
export function lazyWikiClient(
  config: WikiConnectionConfig,
  settings: Readonly<Settings>,
  maxBytes: number,
  label: string,
): () => ConfluenceClient {
  let client: ConfluenceClient | undefined;
  return () => {
    client ??= wikiClient(config, settings, maxBytes, label);
    return client;
  };
}

export function wikiClient(
  config: WikiConnectionConfig,
  settings: Readonly<Settings>,
  maxBytes: number,
  label: string,
): ConfluenceClient {
  const token = settings.secrets[config.token_secret];
  if (!token)
    throw new PermanentFailure(
      `secret ${config.token_secret} is not set: set WEIR_SECRET_${config.token_secret.toUpperCase()} and restart`,
    );
  const web = createWebClient({
    egress: egressPolicy(settings.fetch_allowed_cidrs),
    requestsPerSecond: config.rate_limit,
    // An API, not a crawled site: robots.txt does not speak for it.
    obeyRobots: false,
    timeoutMs: Math.round(config.request_timeout * 1000),
    maxBytes,
    maxRetries: 4,
    label,
    limiters: wikiLimiters(config.rate_limit),
  });
  return createConfluenceClient(
    {
      baseUrl: config.base_url,
      flavor: config.provider === 'confluence_cloud' ? 'cloud' : 'datacenter',
      auth: config.username
        ? { scheme: 'basic', username: config.username, token }
        : { scheme: 'bearer', token },
    },
    web,
  );
}

/** Validation finding when the named secret is not configured. */
export function checkWikiSecret(
  config: WikiConnectionConfig,
  settings: Readonly<Settings>,
): SettingsProblem[] {
  return settings.secrets[config.token_secret]
    ? []
    : [
        {
          code: 'E214',
          field: ['token_secret'],
          message: `secret ${config.token_secret} is not set`,
          remediation: `Set WEIR_SECRET_${config.token_secret.toUpperCase()} (or add it to WEIR_SECRETS) and restart.`,
        },
      ];
}

/** The wiki's root URL as page links use it (Cloud: the site plus /wiki). */
export function wikiRootOf(config: Pick<WikiConnectionConfig, 'base_url' | 'provider'>): string {
  const trimmed = config.base_url.replace(/\/+$/, '');
  return config.provider === 'confluence_cloud' && !trimmed.endsWith('/wiki') ? `${trimmed}/wiki` : trimmed;
}

/** The sync-state scope of a space: the crawler reads it, the page fetcher writes it. */
export function spaceScope(
  config: Pick<WikiConnectionConfig, 'base_url' | 'provider'>,
  spaceKey: string,
): string {
  return `wiki ${config.provider} ${wikiRootOf(config)} ${spaceKey}`;
}

/** Where a page's attachments are downloaded from: their documents' source keys start so. */
export function attachmentPrefix(
  config: Pick<WikiConnectionConfig, 'base_url' | 'provider'>,
  pageId: string,
): string {
  return `${wikiRootOf(config)}/download/attachments/${encodeURIComponent(pageId)}/`;
}
