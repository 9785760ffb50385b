/**
 * The Confluence double's Data Center REST API v1 (test/helpers/confluence-double.ts), under
 * /rest/api: `content?spaceKey=&type=page&start=&limit=`, `content/{id}?expand=body.storage`,
 * `content/{id}/child/attachment`, paged by start/limit (`_links.next`).
 */
import type http from 'node:http';
import { answerJson } from './api-double.js';
import type { ConfluenceWiki, DoublePage } from './confluence-double.js';

export function answerDataCenterApi(
  wiki: ConfluenceWiki,
  path: string,
  url: URL,
  site: string,
  response: http.ServerResponse,
) {
  if (path === '/rest/api/content') {
    if (url.searchParams.get('spaceKey') !== wiki.space.key || url.searchParams.get('type') !== 'page')
      return answerJson(response, 200, {
        results: [],
        start: 0,
        limit: 25,
        size: 0,
        _links: { base: site, context: '' },
      });
    const listed = wiki.space.pages.map((page) => dataCenterPage(wiki, page));
    return offsetPage(wiki, response, url, listed, site);
  }
  const attachments = /^\/rest\/api\/content\/([^/]+)\/child\/attachment$/.exec(path);
  if (attachments) {
    const page = wiki.findPage(attachments[1]);
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
    return offsetPage(wiki, response, url, items, site);
  }
  const single = /^\/rest\/api\/content\/([^/]+)$/.exec(path);
  if (single) {
    const page = wiki.findPage(single[1]);
    if (!page) return answerJson(response, 404, { statusCode: 404, message: 'No content found with id' });
    const expand = url.searchParams.get('expand') ?? '';
    const body = expand.includes('body.storage')
      ? { storage: { value: page.storage, representation: 'storage' } }
      : {};
    return answerJson(response, 200, { ...dataCenterPage(wiki, page), body });
  }
  return answerJson(response, 404, { statusCode: 404, message: `no such endpoint ${path}` });
}

function dataCenterPage(wiki: ConfluenceWiki, page: DoublePage) {
  return {
    id: page.id,
    type: 'page',
    status: 'current',
    title: page.title,
    space: { id: Number(wiki.space.id), key: wiki.space.key, name: 'Engineering' },
    version: { number: page.version, when: `2026-02-0${Math.min(page.version, 9)}T09:00:00.000+01:00` },
    ancestors: page.parentId ? [{ id: page.parentId, type: 'page' }] : [],
    _links: {
      webui: `/display/${wiki.space.key}/${encodeURIComponent(page.title).replace(/%20/g, '+')}`,
      self: '',
    },
  };
}

/** start/limit paging with `_links.next` relative to the context path. */
function offsetPage(
  wiki: ConfluenceWiki,
  response: http.ServerResponse,
  url: URL,
  items: unknown[],
  site: string,
) {
  const limit = Math.min(Number(url.searchParams.get('limit') ?? 25) || 25, wiki.maxLimit);
  const start = Number(url.searchParams.get('start') ?? 0) || 0;
  const results = items.slice(start, start + limit);
  const links: Record<string, string> = { base: site, context: '' };
  if (start + limit < items.length) {
    const next = new URL(url.href);
    next.searchParams.set('start', String(start + limit));
    next.searchParams.set('limit', String(limit));
    links.next = `${wiki.nextLinkOrigin ?? ''}${next.pathname}${next.search}`;
  }
  return answerJson(response, 200, { results, start, limit, size: results.length, _links: links });
}
