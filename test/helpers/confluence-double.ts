/**
 * A Confluence on loopback that speaks both REST APIs the wiki adapters use, as the products
 * answer them (Atlassian's REST references; shapes cut down to the fields read):
 * - Cloud v2 under /wiki/api/v2: `spaces?keys=`, `spaces/{id}/pages` and
 *   `pages/{id}/attachments` with opaque cursors (next page in the `Link` header and
 *   `_links.next`), `pages/{id}?body-format=storage`; Basic auth (e-mail:API token).
 * - Data Center v1 under /rest/api: `content?spaceKey=&type=page&start=&limit=`,
 *   `content/{id}?expand=body.storage`, `content/{id}/child/attachment`, paged by start/limit
 *   (`_links.next`); Bearer personal access tokens.
 * Attachment downloads (`/download/attachments/{page}/{file}`) answer 302 to a second server,
 * another origin, which refuses any request carrying an Authorization header (as a pre-signed
 * media host would) and serves the bytes. Collections cap `limit` (so pagination happens),
 * wrong credentials get 401, and chosen requests get 429 with Retry-After. Next links may be
 * made to point at another origin (`nextLinkOrigin`).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerJson, closeServer, listenOnLoopback } from './api-double.js';
import { answerCloudApi } from './confluence-cloud-api.js';
import { answerDataCenterApi } from './confluence-data-center-api.js';

export interface DoublePage {
  id: string;
  title: string;
  version: number;
  parentId?: string;
  storage: string;
  attachments?: DoubleAttachment[];
  /** Listed, then deleted before it is fetched: the page itself answers 404. */
  deletedAfterListing?: boolean;
}

export interface DoubleAttachment {
  id: string;
  filename: string;
  mediaType: string;
  bytes: Buffer;
  /** The size listed, when the wiki lies about it. */
  listedSize?: number;
}

export interface ConfluenceDouble {
  /** The site (Cloud: append nothing, the adapters add /wiki; Data Center: the base URL). */
  url: string;
  space: { id: string; key: string; pages: DoublePage[] };
  /** Requests seen, as `METHOD path?query`. */
  requests: string[];
  /** Requests answered 429. */
  throttled(): number;
  /** The next `count` requests whose path matches get 429 with `Retry-After: 1`. */
  throttle(pattern: RegExp, count: number): void;
  close(): Promise<void>;
}

/** What the API routes (confluence-cloud-api.ts, confluence-data-center-api.ts) answer from. */
export interface ConfluenceWiki {
  space: ConfluenceDouble['space'];
  /** Largest page size the collections answer. */
  maxLimit: number;
  /** Next links point to this origin instead of the wiki's own. */
  nextLinkOrigin?: string;
  /** A page that still exists. */
  findPage(id: string | null | undefined): DoublePage | undefined;
}

export const DOUBLE_USER = 'ingest@example.com';
export const DOUBLE_TOKEN = 'test-api-token';

export async function startConfluenceDouble(options: {
  pages: DoublePage[];
  /** Largest page size the collections answer. */
  maxLimit?: number;
  /** Added to every answer (API and media host), as a remote wiki's round trip. */
  latencyMs?: number;
  /**
   * The wiki's own rate limit on API requests (the media host is not limited): a token bucket
   * of this many per second holding a fifth of a second's worth; beyond it, 429 with
   * `Retry-After: 1`, as Confluence Cloud answers.
   */
  requestsPerSecond?: number;
  /**
   * Next links point to this origin (absolute URLs) instead of the wiki's own: a hostile or
   * misconfigured wiki sending the client elsewhere.
   */
  nextLinkOrigin?: string;
}): Promise<ConfluenceDouble> {
  const maxLimit = options.maxLimit ?? 2;
  const space = { id: '98304', key: 'ENG', pages: options.pages };
  const requests: string[] = [];
  const throttles: { pattern: RegExp; count: number }[] = [];
  const latency = options.latencyMs ?? 0;
  let throttled = 0;
  const rate = options.requestsPerSecond;
  const burst = rate ? Math.max(1, rate / 5) : 0;
  let tokens = burst;
  let refilledAt = performance.now();
  /** Takes a token of the rate limit; false when there is none. */
  const admit = () => {
    if (!rate) return true;
    const now = performance.now();
    tokens = Math.min(burst, tokens + ((now - refilledAt) / 1000) * rate);
    refilledAt = now;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
  const later = (handle: () => void) => (latency > 0 ? setTimeout(handle, latency) : handle());

  // The media host: no credentials accepted, only a signed query.
  const media = http.createServer((request, response) =>
    later(() => {
      const url = new URL(request.url ?? '/', 'http://media');
      if (request.headers.authorization)
        return answerJson(response, 403, { message: 'credentials sent to the media host' });
      const [pageId, attachmentId] = [url.searchParams.get('page'), url.searchParams.get('attachment')];
      const attachment = findPage(pageId)?.attachments?.find((item) => item.id === attachmentId);
      if (!attachment || url.searchParams.get('token') !== 'signed')
        return answerJson(response, 404, { message: 'gone' });
      response.writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-length': attachment.bytes.length,
      });
      response.end(attachment.bytes);
    }),
  );
  await listenOnLoopback(media);
  const mediaOrigin = `http://127.0.0.1:${(media.address() as AddressInfo).port}`;

  function findPage(id: string | null | undefined): DoublePage | undefined {
    return space.pages.find((page) => page.id === id && !page.deletedAfterListing);
  }
  const wiki: ConfluenceWiki = { space, maxLimit, nextLinkOrigin: options.nextLinkOrigin, findPage };

  const server = http.createServer((request, response) =>
    later(() => {
      const url = new URL(request.url ?? '/', 'http://wiki');
      const path = url.pathname;
      requests.push(`${request.method} ${path}${url.search}`);
      const throttle = throttles.find((entry) => entry.count > 0 && entry.pattern.test(path));
      if (!admit() || throttle) {
        if (throttle) throttle.count--;
        throttled++;
        response.writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' });
        return response.end(JSON.stringify({ message: 'Rate limit exceeded' }));
      }
      const cloud = path.startsWith('/wiki/');
      const authorization = request.headers.authorization ?? '';
      const expected = cloud
        ? `Basic ${Buffer.from(`${DOUBLE_USER}:${DOUBLE_TOKEN}`).toString('base64')}`
        : `Bearer ${DOUBLE_TOKEN}`;
      if (authorization !== expected) return answerJson(response, 401, { message: 'Unauthorized' });
      const site = `http://${request.headers.host}`;
      const download = /^(?:\/wiki)?\/download\/attachments\/([^/]+)\/([^/]+)$/.exec(path);
      if (download) {
        const page = findPage(download[1]);
        const filename = decodeURIComponent(download[2] as string);
        const attachment = page?.attachments?.find((item) => item.filename === filename);
        if (!page || !attachment) return answerJson(response, 404, { message: 'No attachment' });
        response.writeHead(302, {
          location: `${mediaOrigin}/file?page=${page.id}&attachment=${attachment.id}&token=signed`,
        });
        return response.end();
      }
      if (cloud) return answerCloudApi(wiki, path, url, site, response);
      return answerDataCenterApi(wiki, path, url, site, response);
    }),
  );

  await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    space,
    requests,
    throttled: () => throttled,
    throttle(pattern, count) {
      throttles.push({ pattern, count });
    },
    async close() {
      await Promise.all([closeServer(server), closeServer(media)]);
    },
  };
}
