/**
 * SharePoint document libraries through Microsoft Graph v1.0: the `sharepoint` provider of
 * fileshare_enumerator and fileshare_fetcher.
 * - **Auth**: OAuth2 client credentials (`POST <token_url>` with client_id, client_secret,
 *   scope `<graph>/.default`), the token cached until a minute before it expires and fetched
 *   again after a 401.
 * - **Listing**: sites by `GET /sites?search=` or by id, their drives (`/sites/{id}/drives`), and
 *   each drive's changes from `GET /drives/{id}/root/delta`, page by page through
 *   `@odata.nextLink` until the `@odata.deltaLink`, which the next run starts from. Items with
 *   the `deleted` facet are reported as deletions.
 * - **Download**: `GET /drives/{drive}/items/{item}/content` answers 302 to a pre-authenticated
 *   URL, followed without the Authorization header (credentials stay with Graph's origin).
 * Requests go through the shared web client (per-host rate with Retry-After on 429/503, egress
 * policy, body caps); the token request, a POST, through the one outbound client with the same
 * egress policy. A redirect of the token request is a failure: the client secret is never sent
 * on to where it points.
 */
import { EgressRefused, HttpFetchError, outboundRequest } from '../http/outbound.js';
import type { WebClient, WebResponse } from '../http/web-client.js';

export interface GraphConnection {
  /** e.g. https://graph.microsoft.com/v1.0 */
  graphUrl: string;
  /** e.g. https://login.microsoftonline.com/<tenant>/oauth2/v2.0/token */
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  timeoutMs: number;
}

export interface GraphDrive {
  site_id: string;
  site_name: string;
  drive_id: string;
  drive_name: string;
}

export interface GraphFile {
  item_id: string;
  name: string;
  /** Folder path inside the drive (`/` separated, no leading slash), with the name. */
  path: string;
  size: number;
  modified_at: string;
  web_url: string;
  etag: string;
  mime_type: string;
}

export interface DriveChanges {
  files: GraphFile[];
  /** Item ids the delta reports deleted. */
  deleted: string[];
  /** Where the next run starts. */
  deltaLink: string;
  /** The old delta link had expired: `files` is every file, and deletions were not reported. */
  resynced: boolean;
}

/** Graph refused the credentials or the permission. */
export class GraphAccessError extends Error {
  override name = 'GraphAccessError';
  readonly permanent = true;
}

export class GraphNotFound extends Error {
  override name = 'GraphNotFound';
}

/** A delta link Graph no longer honours (410 resyncRequired): enumerate from scratch. */
class ResyncRequired extends Error {
  override name = 'ResyncRequired';
}

export interface SharePointClient {
  drives(
    options: { siteSearch?: string | undefined; siteIds?: readonly string[] | undefined },
    signal: AbortSignal,
  ): Promise<GraphDrive[]>;
  /** Changes since `deltaLink` (every item when absent), every page read. */
  changes(driveId: string, deltaLink: string | undefined, signal: AbortSignal): Promise<DriveChanges>;
  /** The file's bytes; `etag` makes it conditional (`modified: false` on 304). */
  download(
    driveId: string,
    itemId: string,
    etag: string | undefined,
    signal: AbortSignal,
  ): Promise<{ modified: false } | { modified: true; response: WebResponse }>;
}

export function createSharePointClient(connection: GraphConnection, web: WebClient): SharePointClient {
  const graph = connection.graphUrl.replace(/\/+$/, '');
  const scope = `${new URL(graph).origin}/.default`;
  let token: { value: string; expiresAt: number } | undefined;

  async function accessToken(signal: AbortSignal, renew = false): Promise<string> {
    if (!renew && token && token.expiresAt > Date.now()) return token.value;
    token = await requestAccessToken(connection, web, scope, signal);
    return token.value;
  }

  async function get(
    url: string,
    signal: AbortSignal,
    accept = 'application/json',
    extra: Record<string, string> = {},
  ) {
    for (let attempt = 0; ; attempt++) {
      const headers = { ...extra, authorization: `Bearer ${await accessToken(signal, attempt > 0)}` };
      const response = await web.get(url, signal, { originHeaders: headers, accept });
      // An expired or revoked token: one more try with a new one.
      if (response.status === 401 && attempt === 0) continue;
      if (response.status === 401 || response.status === 403)
        throw new GraphAccessError(
          `${url} answered ${response.status}: the app lacks access (Sites.Read.All)`,
        );
      return response;
    }
  }

  async function getJson(url: string, signal: AbortSignal): Promise<Json> {
    const response = await get(url, signal);
    if (response.status === 404) throw new GraphNotFound(`${url} answered 404`);
    if (response.status === 410) throw new ResyncRequired(`${url} answered 410`);
    if (response.status >= 300) throw new HttpFetchError(`${url} answered ${response.status}`);
    try {
      return JSON.parse(response.body.toString('utf8')) as Json;
    } catch {
      throw new HttpFetchError(`${url} did not answer JSON`);
    }
  }

  /** Every `value` of a collection, following `@odata.nextLink`. */
  async function collection(first: string, signal: AbortSignal): Promise<{ items: Json[]; last: Json }> {
    const items: Json[] = [];
    let next: string | undefined = first;
    let last: Json = {};
    const seen = new Set<string>();
    while (next) {
      if (seen.has(next)) throw new HttpFetchError(`${next}: Graph sent the same next link twice`);
      seen.add(next);
      last = await getJson(next, signal);
      if (Array.isArray(last.value)) items.push(...(last.value as Json[]));
      next = typeof last['@odata.nextLink'] === 'string' ? last['@odata.nextLink'] : undefined;
    }
    return { items, last };
  }

  return {
    async drives(options, signal) {
      const sites: Json[] = [];
      for (const id of options.siteIds ?? [])
        sites.push(await getJson(`${graph}/sites/${encodeURIComponent(id)}`, signal));
      if (options.siteSearch !== undefined)
        sites.push(
          ...(await collection(`${graph}/sites?search=${encodeURIComponent(options.siteSearch)}`, signal))
            .items,
        );
      const drives: GraphDrive[] = [];
      for (const site of sites) {
        const { items } = await collection(
          `${graph}/sites/${encodeURIComponent(String(site.id))}/drives`,
          signal,
        );
        for (const drive of items)
          drives.push({
            site_id: String(site.id),
            site_name: String(site.displayName ?? site.name ?? ''),
            drive_id: String(drive.id),
            drive_name: String(drive.name ?? ''),
          });
      }
      return drives;
    },

    async changes(driveId, deltaLink, signal) {
      const full = `${graph}/drives/${encodeURIComponent(driveId)}/root/delta`;
      const first = deltaLink ?? full;
      let read: { items: Json[]; last: Json };
      let resynced = false;
      try {
        read = await collection(first, signal);
      } catch (error) {
        if (!(error instanceof ResyncRequired) || !deltaLink) throw error;
        read = await collection(full, signal);
        resynced = true;
      }
      const { items, last } = read;
      const link = last['@odata.deltaLink'];
      if (typeof link !== 'string')
        throw new HttpFetchError(`${first}: the delta ended without an @odata.deltaLink`);
      const { files, deleted } = filesAndDeletions(items);
      return { files, deleted, deltaLink: link, resynced };
    },

    async download(driveId, itemId, etag, signal) {
      const url = `${graph}/drives/${encodeURIComponent(driveId)}/items/${encodeURIComponent(itemId)}/content`;
      const response = await get(url, signal, '*/*', etag ? { 'if-none-match': etag } : {});
      if (response.status === 304) return { modified: false };
      if (response.status === 404 || response.status === 410)
        throw new GraphNotFound(`${url} answered ${response.status}`);
      if (response.status >= 300) throw new HttpFetchError(`${url} answered ${response.status}`);
      return { modified: true, response };
    },
  };
}

type Json = Record<string, unknown>;

/** A token for Graph by the client-credentials grant; a redirect is refused, not followed. */
async function requestAccessToken(
  connection: GraphConnection,
  web: WebClient,
  scope: string,
  signal: AbortSignal,
): Promise<{ value: string; expiresAt: number }> {
  const timeout = AbortSignal.timeout(connection.timeoutMs);
  const response = await outboundRequest({
    url: connection.tokenUrl,
    egress: web.egress,
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: connection.clientId,
      client_secret: connection.clientSecret,
      scope,
    }).toString(),
    signal: AbortSignal.any([signal, timeout]),
  }).catch((error: unknown) => {
    if (error instanceof EgressRefused) throw error;
    throw new HttpFetchError(`token request to ${connection.tokenUrl} failed: ${(error as Error).message}`);
  });
  const text = await response.text();
  if (response.status === 400 || response.status === 401 || response.status === 403)
    throw new GraphAccessError(
      `${connection.tokenUrl} refused the client credentials (${response.status}): check client_id and the secret`,
    );
  if (response.status >= 300 && response.status < 400)
    throw new GraphAccessError(
      `${connection.tokenUrl} answered ${response.status} (a redirect, not followed: the client secret goes to token_url only)`,
    );
  if (!response.ok) throw new HttpFetchError(`${connection.tokenUrl} answered ${response.status}`);
  const body = JSON.parse(text) as { access_token?: string; expires_in?: number };
  if (!body.access_token) throw new HttpFetchError(`${connection.tokenUrl} answered without an access_token`);
  // Renewed a minute early, so a token does not expire between this check and Graph's.
  return {
    value: body.access_token,
    expiresAt: Date.now() + Math.max(0, (body.expires_in ?? 3600) - 60) * 1000,
  };
}

/** A delta's items as the files it changed and the ids it deleted; folders are left out. */
function filesAndDeletions(items: readonly Json[]): { files: GraphFile[]; deleted: string[] } {
  const files: GraphFile[] = [];
  const deleted: string[] = [];
  for (const item of items) {
    if (item.deleted) {
      deleted.push(String(item.id));
      continue;
    }
    const file = item.file as Json | undefined;
    if (!file) continue; // folders and the root
    const parent = (item.parentReference ?? {}) as Json;
    // "/drives/{id}/root:/Shared/Reports" -> "Shared/Reports"
    const folder = String(parent.path ?? '').replace(/^\/drives\/[^/]+\/root:?\/?/, '');
    const name = String(item.name ?? '');
    files.push({
      item_id: String(item.id),
      name,
      path: folder ? `${decodeURIComponent(folder)}/${name}` : name,
      size: Number(item.size ?? 0),
      modified_at: String(item.lastModifiedDateTime ?? ''),
      web_url: String(item.webUrl ?? ''),
      etag: String(item.eTag ?? ''),
      mime_type: String(file.mimeType ?? 'application/octet-stream'),
    });
  }
  return { files, deleted };
}
