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
      if (cloud) return cloudApi(path, url, site, response);
      return dataCenterApi(path, url, site, response);
    }),
  );

  function cloudApi(path: string, url: URL, site: string, response: http.ServerResponse) {
    const base = `${site}/wiki`;
    if (path === '/wiki/api/v2/spaces') {
      const keys = (url.searchParams.get('keys') ?? '').split(',');
      const results = keys.includes(space.key)
        ? [{ id: space.id, key: space.key, name: 'Engineering', type: 'global' }]
        : [];
      return answerJson(response, 200, { results, _links: { base } });
    }
    const pages = /^\/wiki\/api\/v2\/spaces\/([^/]+)\/pages$/.exec(path);
    if (pages) {
      if (pages[1] !== space.id) return answerJson(response, 404, { message: 'No space' });
      return cursorPage(response, url, space.pages.map(cloudPage), base);
    }
    const attachments = /^\/wiki\/api\/v2\/pages\/([^/]+)\/attachments$/.exec(path);
    if (attachments) {
      const page = findPage(attachments[1]);
      if (!page) return answerJson(response, 404, { message: 'No page' });
      const items = (page.attachments ?? []).map((item) => ({
        id: item.id,
        status: 'current',
        title: item.filename,
        mediaType: item.mediaType,
        fileSize: item.listedSize ?? item.bytes.length,
        pageId: page.id,
        downloadLink: `/download/attachments/${page.id}/${encodeURIComponent(item.filename)}?version=1&api=v2`,
        webuiLink: `/pages/viewpageattachments.action?pageId=${page.id}`,
      }));
      return cursorPage(response, url, items, base);
    }
    const single = /^\/wiki\/api\/v2\/pages\/([^/]+)$/.exec(path);
    if (single) {
      const page = findPage(single[1]);
      if (!page)
        return answerJson(response, 404, {
          errors: [{ status: 404, code: 'NOT_FOUND', title: 'Not Found' }],
        });
      const body =
        url.searchParams.get('body-format') === 'storage'
          ? { storage: { representation: 'storage', value: page.storage } }
          : {};
      return answerJson(response, 200, {
        ...cloudPage(page),
        body,
        _links: { ...cloudPage(page)._links, base },
      });
    }
    return answerJson(response, 404, { message: `no such endpoint ${path}` });
  }

  function cloudPage(page: DoublePage) {
    return {
      id: page.id,
      status: 'current',
      title: page.title,
      spaceId: space.id,
      parentId: page.parentId ?? null,
      parentType: page.parentId ? 'page' : null,
      authorId: '5b10ac8d82e05b22cc7d4ef5',
      createdAt: '2026-01-05T10:00:00.000Z',
      version: {
        number: page.version,
        createdAt: `2026-02-0${Math.min(page.version, 9)}T09:00:00.000Z`,
        message: '',
      },
      _links: {
        webui: `/spaces/${space.key}/pages/${page.id}/${encodeURIComponent(page.title.replace(/ /g, '+'))}`,
      },
    };
  }

  /** Opaque cursors (base64 of the offset), the next page in Link and _links.next. */
  function cursorPage(response: http.ServerResponse, url: URL, items: unknown[], base: string) {
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 25) || 25, maxLimit);
    const cursor = url.searchParams.get('cursor');
    const start = cursor
      ? Number(Buffer.from(cursor, 'base64url').toString('utf8').replace('offset:', ''))
      : 0;
    const results = items.slice(start, start + limit);
    const links: Record<string, string> = { base };
    const headers: Record<string, string> = {};
    if (start + limit < items.length) {
      const next = new URL(url.href);
      next.searchParams.set('cursor', Buffer.from(`offset:${start + limit}`).toString('base64url'));
      links.next = `${options.nextLinkOrigin ?? ''}${next.pathname}${next.search}`;
      headers.link = `<${links.next}>; rel="next", <${base}>; rel="base"`;
    }
    return answerJson(response, 200, { results, _links: links }, headers);
  }

  function dataCenterApi(path: string, url: URL, site: string, response: http.ServerResponse) {
    if (path === '/rest/api/content') {
      if (url.searchParams.get('spaceKey') !== space.key || url.searchParams.get('type') !== 'page')
        return answerJson(response, 200, {
          results: [],
          start: 0,
          limit: 25,
          size: 0,
          _links: { base: site, context: '' },
        });
      return offsetPage(response, url, space.pages.map(dataCenterPage), site);
    }
    const attachments = /^\/rest\/api\/content\/([^/]+)\/child\/attachment$/.exec(path);
    if (attachments) {
      const page = findPage(attachments[1]);
      if (!page) return answerJson(response, 404, { statusCode: 404, message: 'No content found' });
      const items = (page.attachments ?? []).map((item) => ({
        id: `att${item.id}`,
        type: 'attachment',
        status: 'current',
        title: item.filename,
        metadata: { mediaType: item.mediaType },
        extensions: { mediaType: item.mediaType, fileSize: item.listedSize ?? item.bytes.length },
        _links: {
          download: `/download/attachments/${page.id}/${encodeURIComponent(item.filename)}?version=1&api=v2`,
        },
      }));
      return offsetPage(response, url, items, site);
    }
    const single = /^\/rest\/api\/content\/([^/]+)$/.exec(path);
    if (single) {
      const page = findPage(single[1]);
      if (!page) return answerJson(response, 404, { statusCode: 404, message: 'No content found with id' });
      const expand = url.searchParams.get('expand') ?? '';
      const body = expand.includes('body.storage')
        ? { storage: { value: page.storage, representation: 'storage' } }
        : {};
      return answerJson(response, 200, { ...dataCenterPage(page), body });
    }
    return answerJson(response, 404, { statusCode: 404, message: `no such endpoint ${path}` });
  }

  function dataCenterPage(page: DoublePage) {
    return {
      id: page.id,
      type: 'page',
      status: 'current',
      title: page.title,
      space: { id: Number(space.id), key: space.key, name: 'Engineering' },
      version: { number: page.version, when: `2026-02-0${Math.min(page.version, 9)}T09:00:00.000+01:00` },
      ancestors: page.parentId ? [{ id: page.parentId, type: 'page' }] : [],
      _links: {
        webui: `/display/${space.key}/${encodeURIComponent(page.title).replace(/%20/g, '+')}`,
        self: '',
      },
    };
  }

  /** start/limit paging with `_links.next` relative to the context path. */
  function offsetPage(response: http.ServerResponse, url: URL, items: unknown[], site: string) {
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 25) || 25, maxLimit);
    const start = Number(url.searchParams.get('start') ?? 0) || 0;
    const results = items.slice(start, start + limit);
    const links: Record<string, string> = { base: site, context: '' };
    if (start + limit < items.length) {
      const next = new URL(url.href);
      next.searchParams.set('start', String(start + limit));
      next.searchParams.set('limit', String(limit));
      links.next = `${options.nextLinkOrigin ?? ''}${next.pathname}${next.search}`;
    }
    return answerJson(response, 200, { results, start, limit, size: results.length, _links: links });
  }

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
