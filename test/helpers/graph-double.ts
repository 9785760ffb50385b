/**
 * Microsoft Graph on loopback, as much of it as the `sharepoint` file-share provider uses, in
 * Graph's shapes (Microsoft Graph v1.0 reference): the OAuth2 client-credentials token
 * endpoint (form POST; 401 `invalid_client` otherwise), `/sites?search=`, `/sites/{id}`,
 * `/sites/{id}/drives`, `/drives/{id}/root/delta` (two items a page through
 * `@odata.nextLink`, then an `@odata.deltaLink` whose token returns only later changes,
 * deletions as items with the `deleted` facet) and `/drives/{id}/items/{id}/content` (304 on a
 * matching `If-None-Match`, else 302 to a second origin that refuses an Authorization header).
 * Every Graph request needs the issued bearer token. The drive's files and delta pages are in
 * graph-drive.ts.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerJson, closeServer, listenOnLoopback } from './api-double.js';
import { eTag, GraphDrive } from './graph-drive.js';

export interface DriveFile {
  id: string;
  name: string;
  /** Folder inside the drive, '' for the root. */
  folder: string;
  bytes: Buffer;
  mimeType: string;
}

export interface GraphDouble {
  /** Graph base URL (ends in /v1.0). */
  graphUrl: string;
  tokenUrl: string;
  siteId: string;
  driveId: string;
  requests: string[];
  /** Adds or replaces a file (a new version and eTag). */
  put(file: DriveFile): void;
  remove(id: string): void;
  throttle(pattern: RegExp, count: number): void;
  close(): Promise<void>;
}

export const GRAPH_CLIENT_ID = '4a1b2c3d-0000-4000-8000-00000000c1d0';
export const GRAPH_CLIENT_SECRET = 'graph-client-secret';

export async function startGraphDouble(
  files: DriveFile[],
  /** `@odata.nextLink`s point to this origin instead of Graph's own (a hostile answer). */
  options: { nextLinkOrigin?: string } = {},
): Promise<GraphDouble> {
  const siteId =
    'contoso.sharepoint.com,5a58bb09-1fba-41c1-8125-69da264370a0,9f2ec1da-0be4-4a74-9254-973f0add78fd';
  const driveId = 'b!CbtYWrofwUGBJWnaJkNwoNrBLp_kC3RKklSXPwrdeP3yH8_qmH9xT5Y6RODPNfYI';
  const drive = new GraphDrive(driveId, files);
  const token = `eyJ0eXAiOiJKV1QiLCJ0ZXN0Ijp0cnVlfQ.${Math.random().toString(36).slice(2)}`;
  const requests: string[] = [];
  const throttles: { pattern: RegExp; count: number }[] = [];

  const media = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://media');
    if (request.headers.authorization)
      return answerJson(response, 403, { error: 'credentials sent to the download host' });
    const file = drive.find(url.searchParams.get('item') ?? '');
    if (!file || url.searchParams.get('sig') !== 'ok') return answerJson(response, 404, { error: 'gone' });
    response.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-length': file.bytes.length,
    });
    response.end(file.bytes);
  });
  await listenOnLoopback(media);
  const mediaOrigin = `http://127.0.0.1:${(media.address() as AddressInfo).port}`;

  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://graph');
    requests.push(`${request.method} ${url.pathname}${url.search}`);
    const throttle = throttles.find((entry) => entry.count > 0 && entry.pattern.test(url.pathname));
    if (throttle) {
      throttle.count--;
      response.writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' });
      return response.end(JSON.stringify({ error: { code: 'TooManyRequests', message: 'Please retry' } }));
    }
    if (url.pathname === '/tenant/oauth2/v2.0/token' && request.method === 'POST')
      return issueToken(request, response);
    if (request.headers.authorization !== `Bearer ${token}`)
      return answerJson(response, 401, {
        error: { code: 'InvalidAuthenticationToken', message: 'Access token is empty.' },
      });
    const base = `http://${request.headers.host}/v1.0`;
    const path = decodeURIComponent(url.pathname).replace(/^\/v1\.0/, '');
    const site = {
      id: siteId,
      name: 'Engineering',
      displayName: 'Engineering',
      webUrl: 'https://contoso.sharepoint.com/sites/Engineering',
    };
    if (path === '/sites')
      return answerJson(response, 200, {
        value: /eng/i.test(url.searchParams.get('search') ?? '') ? [site] : [],
      });
    if (path === `/sites/${siteId}`) return answerJson(response, 200, site);
    if (path === `/sites/${siteId}/drives`)
      return answerJson(response, 200, {
        value: [{ id: driveId, name: 'Documents', driveType: 'documentLibrary' }],
      });
    if (path === `/drives/${driveId}/root/delta`)
      return answerJson(response, 200, drive.deltaPage(url, base, options.nextLinkOrigin));
    const content = new RegExp(`^/drives/${escapeRegExp(driveId)}/items/([^/]+)/content$`).exec(path);
    if (content) {
      const file = drive.find(content[1] as string);
      if (!file) return answerJson(response, 404, { error: { code: 'itemNotFound' } });
      if (request.headers['if-none-match'] === eTag(file)) {
        response.writeHead(304);
        return response.end();
      }
      response.writeHead(302, { location: `${mediaOrigin}/download?item=${file.id}&sig=ok` });
      return response.end();
    }
    return answerJson(response, 404, { error: { code: 'itemNotFound', message: `no ${path}` } });
  });

  function issueToken(request: http.IncomingMessage, response: http.ServerResponse) {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      const form = new URLSearchParams(body);
      if (
        form.get('grant_type') !== 'client_credentials' ||
        form.get('client_id') !== GRAPH_CLIENT_ID ||
        form.get('client_secret') !== GRAPH_CLIENT_SECRET
      )
        return answerJson(response, 401, {
          error: 'invalid_client',
          error_description: 'AADSTS7000215: Invalid client secret provided.',
        });
      answerJson(response, 200, {
        token_type: 'Bearer',
        expires_in: 3599,
        ext_expires_in: 3599,
        access_token: token,
      });
    });
  }

  await listenOnLoopback(server);
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    graphUrl: `${origin}/v1.0`,
    tokenUrl: `${origin}/tenant/oauth2/v2.0/token`,
    siteId,
    driveId,
    requests,
    put: (file) => drive.put(file),
    remove: (id) => drive.remove(id),
    throttle(pattern, count) {
      throttles.push({ pattern, count });
    },
    async close() {
      await Promise.all([closeServer(server), closeServer(media)]);
    },
  };
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
