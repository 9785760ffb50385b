/** The `sharepoint` settings fileshare_enumerator and fileshare_fetcher take (Microsoft Graph). */
import { type Static, Type } from 'typebox';
import { createSharePointClient, type SharePointClient } from '../../fileshare/sharepoint.js';
import type { Settings } from '../../settings.js';
import { PermanentFailure, type SettingsProblem } from '../adapter.js';
import { apiWebClient, boundSecret, checkSecret, credentialsBoundTo } from '../api-access.js';

export const sharepointConnection = Type.Object(
  {
    tenant_id: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'Entra ID tenant: sets token_url to its v2.0 token endpoint',
      }),
    ),
    token_url: Type.Optional(
      Type.String({ pattern: '^https?://', description: 'OAuth2 token endpoint (default from tenant_id)' }),
    ),
    client_id: Type.String({ minLength: 1, description: 'the app registration (client) id' }),
    client_secret_secret: Type.String({
      pattern: '^[a-z0-9_]+$',
      description:
        'name of the secret holding the client secret (settings `secrets`: env WEIR_SECRET_<NAME>); the token URL and graph_url must both be among its origins (WEIR_SECRET_<NAME>_ORIGINS)',
    }),
    graph_url: Type.String({
      pattern: '^https?://',
      default: 'https://graph.microsoft.com/v1.0',
      description: 'Microsoft Graph base URL',
    }),
    site_search: Type.Optional(
      Type.String({ description: 'sites whose name matches (GET /sites?search=); "*" for every site' }),
    ),
    site_ids: Type.Array(Type.String({ minLength: 1 }), {
      default: [],
      description: 'sites by id (host,site-guid,web-guid)',
    }),
    drives: Type.Array(Type.String({ minLength: 1 }), {
      default: [],
      description: 'document libraries to list by name; empty lists every drive of the sites',
    }),
    rate_limit: Type.Number({
      exclusiveMinimum: 0,
      maximum: 1000,
      default: 10,
      description: 'requests per second to Graph',
    }),
    request_timeout: Type.Number({
      exclusiveMinimum: 0,
      maximum: 600,
      default: 60,
      description: 'seconds per request',
    }),
  },
  { additionalProperties: false },
);

export type SharePointConnection = Static<typeof sharepointConnection>;

export function sharepointClient(
  connection: SharePointConnection,
  settings: Readonly<Settings>,
  maxBytes: number,
  label: string,
): SharePointClient {
  const secret = boundSecret(settings, connection.client_secret_secret);
  const tokenUrl = tokenUrlOf(connection);
  if (!tokenUrl) throw new PermanentFailure('sharepoint needs `tenant_id` or `token_url`');
  // The client secret is posted to the token URL (one fixed URL, checked here); the token it
  // buys is a credential too, so every Graph request carrying it is checked against the same
  // origins (credentialsBoundTo), next and delta links included.
  const clientSecret = secret.valueFor(tokenUrl);
  const web = apiWebClient({
    api: 'sharepoint',
    settings,
    requestsPerSecond: connection.rate_limit,
    timeoutSeconds: connection.request_timeout,
    maxBytes,
    label,
  });
  return createSharePointClient(
    {
      graphUrl: connection.graph_url,
      tokenUrl,
      clientId: connection.client_id,
      clientSecret,
      timeoutMs: Math.round(connection.request_timeout * 1000),
    },
    credentialsBoundTo(web, secret),
  );
}

/** `token_url`, or the tenant's v2.0 token endpoint. */
function tokenUrlOf(connection: SharePointConnection): string | undefined {
  if (connection.token_url) return connection.token_url;
  return connection.tenant_id
    ? `https://login.microsoftonline.com/${encodeURIComponent(connection.tenant_id)}/oauth2/v2.0/token`
    : undefined;
}

/**
 * Validation findings when the client secret is not configured, or may not go to the token
 * URL or to Graph (the token obtained with it is sent there).
 */
export function checkSharePointSecret(
  connection: SharePointConnection | undefined,
  settings: Readonly<Settings>,
): SettingsProblem[] {
  if (!connection) return [];
  const tokenUrl = tokenUrlOf(connection);
  const tokenField = connection.token_url ? 'token_url' : 'tenant_id';
  return checkSecret(
    settings,
    connection.client_secret_secret,
    ['sharepoint', 'client_secret_secret'],
    [
      ...(tokenUrl ? [{ url: tokenUrl, field: ['sharepoint', tokenField] }] : []),
      { url: connection.graph_url, field: ['sharepoint', 'graph_url'] },
    ],
  );
}

/** The sync-state scope of a drive. */
export function driveScope(connection: SharePointConnection, driveId: string): string {
  return `sharepoint ${connection.graph_url} ${driveId}`;
}
