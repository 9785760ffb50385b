/**
 * The Confluence double's Cloud REST API v2 (test/helpers/confluence-double.ts), under
 * /wiki/api/v2: `spaces?keys=`, `spaces/{id}/pages` and `pages/{id}/attachments` with opaque
 * cursors (next page in the `Link` header and `_links.next`), `pages/{id}?body-format=storage`.
 */
import type http from 'node:http';
import { answerJson } from './api-double.js';
import type { ConfluenceWiki, DoublePage } from './confluence-double.js';

export function answerCloudApi(
  wiki: ConfluenceWiki,
  path: string,
  url: URL,
  site: string,
  response: http.ServerResponse,
) {
  const base = `${site}/wiki`;
  if (path === '/wiki/api/v2/spaces') {
    const keys = (url.searchParams.get('keys') ?? '').split(',');
    const results = keys.includes(wiki.space.key)
      ? [{ id: wiki.space.id, key: wiki.space.key, name: 'Engineering', type: 'global' }]
      : [];
    return answerJson(response, 200, { results, _links: { base } });
  }
  const pages = /^\/wiki\/api\/v2\/spaces\/([^/]+)\/pages$/.exec(path);
  if (pages) {
    if (pages[1] !== wiki.space.id) return answerJson(response, 404, { message: 'No space' });
    const listed = wiki.space.pages.map((page) => cloudPage(wiki, page));
    return cursorPage(wiki, response, url, listed, base);
  }
  const attachments = /^\/wiki\/api\/v2\/pages\/([^/]+)\/attachments$/.exec(path);
  if (attachments) {
    const page = wiki.findPage(attachments[1]);
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
    return cursorPage(wiki, response, url, items, base);
  }
  const single = /^\/wiki\/api\/v2\/pages\/([^/]+)$/.exec(path);
  if (single) {
    const page = wiki.findPage(single[1]);
    if (!page)
      return answerJson(response, 404, {
        errors: [{ status: 404, code: 'NOT_FOUND', title: 'Not Found' }],
      });
    const body =
      url.searchParams.get('body-format') === 'storage'
        ? { storage: { representation: 'storage', value: page.storage } }
        : {};
    return answerJson(response, 200, {
      ...cloudPage(wiki, page),
      body,
      _links: { ...cloudPage(wiki, page)._links, base },
    });
  }
  return answerJson(response, 404, { message: `no such endpoint ${path}` });
}

function cloudPage(wiki: ConfluenceWiki, page: DoublePage) {
  return {
    id: page.id,
    status: 'current',
    title: page.title,
    spaceId: wiki.space.id,
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
      webui: `/spaces/${wiki.space.key}/pages/${page.id}/${encodeURIComponent(page.title.replace(/ /g, '+'))}`,
    },
  };
}

/** Opaque cursors (base64 of the offset), the next page in Link and _links.next. */
function cursorPage(
  wiki: ConfluenceWiki,
  response: http.ServerResponse,
  url: URL,
  items: unknown[],
  base: string,
) {
  const limit = Math.min(Number(url.searchParams.get('limit') ?? 25) || 25, wiki.maxLimit);
  const cursor = url.searchParams.get('cursor');
  const start = cursor ? Number(Buffer.from(cursor, 'base64url').toString('utf8').replace('offset:', '')) : 0;
  const results = items.slice(start, start + limit);
  const links: Record<string, string> = { base };
  const headers: Record<string, string> = {};
  if (start + limit < items.length) {
    const next = new URL(url.href);
    next.searchParams.set('cursor', Buffer.from(`offset:${start + limit}`).toString('base64url'));
    links.next = `${wiki.nextLinkOrigin ?? ''}${next.pathname}${next.search}`;
    headers.link = `<${links.next}>; rel="next", <${base}>; rel="base"`;
  }
  return answerJson(response, 200, { results, _links: links }, headers);
}
