/**
 * Loopback doubles of the knowledge bases kbase_writer publishes to:
 * - a plain HTTP JSON endpoint (PUT/DELETE `/pages/<slug>`, bearer token checked);
 * - the Confluence page-writing API, Cloud REST v2 (`/wiki/api/v2/spaces`, `/pages`) and Data
 *   Center REST v1 (`/rest/api/content`), with version numbers checked as Confluence does
 *   (an update must carry the current version + 1, else 409), and switches to answer the
 *   next write with 409 (someone saved meanwhile) or 429 with Retry-After.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const KBASE_TOKEN = 'kbase-token';

export interface RecordedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  body: unknown;
}

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

function send(
  response: ServerResponse,
  status: number,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  response
    .writeHead(status, { 'content-type': 'application/json', ...headers })
    .end(body === undefined ? '' : JSON.stringify(body));
}

async function listen(handler: (request: IncomingMessage, response: ServerResponse) => Promise<void>) {
  const server = createServer((request, response) => {
    handler(request, response).catch((error: unknown) => send(response, 500, { message: String(error) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface HttpKnowledgeBaseDouble {
  url: string;
  pages: Map<
    string,
    {
      title: string;
      markdown: string;
      content_hash: string;
      sources: { source_id: string; url: string | null; link: string | null }[];
    }
  >;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startHttpKnowledgeBase(): Promise<HttpKnowledgeBaseDouble> {
  const pages: HttpKnowledgeBaseDouble['pages'] = new Map();
  const requests: RecordedRequest[] = [];
  const server = await listen(async (request, response) => {
    const body = await readBody(request);
    const path = request.url ?? '';
    requests.push({ method: request.method ?? '', path, authorization: request.headers.authorization, body });
    if (request.headers.authorization !== `Bearer ${KBASE_TOKEN}`)
      return send(response, 401, { message: 'no' });
    const slug = /^\/pages\/([^/]+)$/.exec(path)?.[1];
    if (!slug) return send(response, 404, { message: 'not found' });
    if (request.method === 'PUT') {
      const existed = pages.has(slug);
      pages.set(slug, body as never);
      return send(response, existed ? 200 : 201, { slug });
    }
    if (request.method === 'DELETE') return send(response, pages.delete(slug) ? 204 : 404);
    send(response, 405);
  });
  return { url: `${server.url}/pages`, pages, requests, close: server.close };
}

export interface ConfluencePage {
  id: string;
  title: string;
  version: number;
  body: string;
  parentId?: string | undefined;
}

export interface ConfluenceWriteDouble {
  url: string;
  pages: Map<string, ConfluencePage>;
  requests: RecordedRequest[];
  /** The next page write answers 409 after bumping the page's version (a concurrent edit). */
  conflictOnce: boolean;
  /** The next request answers 429 with this Retry-After (seconds). */
  throttleOnce: number | undefined;
  close(): Promise<void>;
}

export async function startConfluenceWriteDouble(
  flavor: 'cloud' | 'datacenter',
  credentials: { username?: string; token: string },
): Promise<ConfluenceWriteDouble> {
  const expected = credentials.username
    ? `Basic ${Buffer.from(`${credentials.username}:${credentials.token}`).toString('base64')}`
    : `Bearer ${credentials.token}`;
  let nextId = 5000;
  const state = {
    pages: new Map<string, ConfluencePage>(),
    requests: [] as RecordedRequest[],
    conflictOnce: false,
    throttleOnce: undefined as number | undefined,
  };
  const root = flavor === 'cloud' ? '/wiki/api/v2' : '/rest/api';
  const render = (page: ConfluencePage) => ({
    id: page.id,
    title: page.title,
    version: { number: page.version },
    _links: { webui: `/spaces/KB/pages/${page.id}` },
  });
  const server = await listen(async (request, response) => {
    const body = (await readBody(request)) as Record<string, unknown> | undefined;
    const url = new URL(request.url ?? '/', 'http://double');
    state.requests.push({
      method: request.method ?? '',
      path: url.pathname + url.search,
      authorization: request.headers.authorization,
      body,
    });
    if (request.headers.authorization !== expected) return send(response, 401, { message: 'Unauthorized' });
    if (state.throttleOnce !== undefined) {
      const seconds = state.throttleOnce;
      state.throttleOnce = undefined;
      return send(response, 429, { message: 'rate limited' }, { 'retry-after': String(seconds) });
    }
    const path = url.pathname;
    if (flavor === 'cloud' && path === `${root}/spaces`)
      return send(response, 200, {
        results: url.searchParams.get('keys') === 'KB' ? [{ id: '77', key: 'KB' }] : [],
      });
    const collection = flavor === 'cloud' ? `${root}/pages` : `${root}/content`;
    if (path === collection && request.method === 'GET') {
      const title = url.searchParams.get('title');
      return send(response, 200, {
        results: [...state.pages.values()].filter((page) => page.title === title).map(render),
      });
    }
    if (path === collection && request.method === 'POST') {
      const title = String(body?.title);
      if ([...state.pages.values()].some((page) => page.title === title))
        return send(response, 400, { message: 'A page with this title already exists' });
      const storage =
        flavor === 'cloud'
          ? ((body?.body as Record<string, unknown>)?.value as string)
          : (((body?.body as Record<string, unknown>)?.storage as Record<string, unknown>)?.value as string);
      const page: ConfluencePage = { id: String(nextId++), title, version: 1, body: storage };
      state.pages.set(page.id, page);
      return send(response, 200, render(page));
    }
    const id = new RegExp(`^${collection}/(\\d+)$`).exec(path)?.[1];
    const page = id ? state.pages.get(id) : undefined;
    if (!page) return send(response, 404, { message: 'No content found' });
    if (request.method === 'GET') return send(response, 200, render(page));
    if (request.method === 'DELETE') {
      state.pages.delete(page.id);
      return send(response, 204);
    }
    if (request.method === 'PUT') {
      if (state.conflictOnce) {
        state.conflictOnce = false;
        page.version += 1;
        return send(response, 409, { message: 'Version must be incremented on update' });
      }
      const version = Number((body?.version as Record<string, unknown>)?.number);
      if (version !== page.version + 1)
        return send(response, 409, { message: `Version ${version} is not the next` });
      page.version = version;
      page.body =
        flavor === 'cloud'
          ? ((body?.body as Record<string, unknown>)?.value as string)
          : (((body?.body as Record<string, unknown>)?.storage as Record<string, unknown>)?.value as string);
      return send(response, 200, render(page));
    }
    send(response, 405);
  });
  return Object.assign(state, { url: server.url, close: server.close });
}
