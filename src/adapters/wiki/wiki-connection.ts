/**
 * The connection settings every wiki_ step takes: which product, where, and the name of the
 * secret holding the token (never the token itself: pipeline YAML is stored and shown).
 */
import { type Static, Type } from 'typebox';
import type { Settings } from '../../settings.js';
import {
  type ConfluenceClient,
  wikiRoot as confluenceWikiRoot,
  createConfluenceClient,
} from '../../wiki/confluence.js';
import type { SettingsProblem } from '../adapter.js';
import { apiWebClient, boundSecret, checkSecret } from '../api-access.js';

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
      'name of the secret holding the API token or personal access token (settings `secrets`: env WEIR_SECRET_<NAME>); base_url must be one of its origins (WEIR_SECRET_<NAME>_ORIGINS)',
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

export function wikiClient(
  config: WikiConnectionConfig,
  settings: Readonly<Settings>,
  maxBytes: number,
  label: string,
): ConfluenceClient {
  const secret = boundSecret(settings, config.token_secret);
  const web = apiWebClient({
    api: 'wiki',
    settings,
    requestsPerSecond: config.rate_limit,
    timeoutSeconds: config.request_timeout,
    maxBytes,
    label,
  });
  return createConfluenceClient(
    {
      baseUrl: config.base_url,
      flavor: flavorOf(config),
      auth: config.username
        ? { scheme: 'basic', username: config.username, token: secret.valueFor }
        : { scheme: 'bearer', token: secret.valueFor },
    },
    web,
  );
}

/** Validation findings when the named secret is not configured or may not go to `base_url`. */
export function checkWikiSecret(
  config: WikiConnectionConfig,
  settings: Readonly<Settings>,
): SettingsProblem[] {
  return checkSecret(
    settings,
    config.token_secret,
    ['token_secret'],
    [{ url: config.base_url, field: ['base_url'] }],
  );
}

const flavorOf = (config: Pick<WikiConnectionConfig, 'provider'>) =>
  config.provider === 'confluence_cloud' ? 'cloud' : 'datacenter';

/** The wiki's root URL as page links use it (Cloud: the site plus /wiki). */
export function wikiRootOf(config: Pick<WikiConnectionConfig, 'base_url' | 'provider'>): string {
  return confluenceWikiRoot(config.base_url, flavorOf(config));
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
