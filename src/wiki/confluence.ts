/**
 * A Confluence REST client for the wiki adapters, for both products people run:
 * - **Cloud** (REST v2 under `<site>/wiki/api/v2`): spaces resolved with `/spaces?keys=`,
 *   pages of a space from `/spaces/{id}/pages` and attachments from `/pages/{id}/attachments`,
 *   each paged by an opaque `cursor` whose next URL comes in the `Link` header (or
 *   `_links.next`); a page body with `?body-format=storage`.
 * - **Data Center / Server** (REST v1 under `<base>/rest/api`): `/content?spaceKey=&type=page`
 *   and `/content/{id}/child/attachment`, paged by `start` and `limit` (`_links.next`); a page
 *   body with `?expand=body.storage`.
 * Auth is Basic (email and API token, Cloud) or a Bearer personal access token (Data Center).
 * Every request goes through the shared web client: the per-host limiter (429 and 503 wait for
 * `Retry-After`), the circuit breaker, the egress policy and the body cap. Credentials go to the
 * token's declared origins only (asked for per request URL, next links included), never across
 * a redirect to another host (attachment downloads).
 */
import { HttpFetchError } from '../http/fetch-once.js';
import type { WebClient, WebResponse } from '../http/web-client.js';

export type WikiFlavor = 'cloud' | 'datacenter';

export interface WikiAuth {
  /** `basic`: `username` (an e-mail on Cloud) and the token; `bearer`: the token alone. */
  scheme: 'basic' | 'bearer';
  username?: string;
  /**
   * The token for a request to `url`, asked for on every request: a secret bound to its
   * origins (src/adapters/api-access.ts `boundSecret`) refuses a URL outside them, so a next
   * link or download link pointing elsewhere never carries it.
   */
  token: (url: string) => string;
}

/** The Authorization header of a request to `url`. */
export function authorizationFor(auth: WikiAuth, url: string): string {
  const token = auth.token(url);
  return auth.scheme === 'basic'
    ? `Basic ${Buffer.from(`${auth.username ?? ''}:${token}`).toString('base64')}`
    : `Bearer ${token}`;
}

export interface WikiConnection {
  /** Cloud: `https://<site>.atlassian.net` (with or without `/wiki`); Data Center: the base URL. */
  baseUrl: string;
  flavor: WikiFlavor;
  auth: WikiAuth;
}

/** One page as listed (the wiki_space_crawler payload). */
export interface WikiPageListing {
  page_id: string;
  space_id: string;
  space_key: string;
  title: string;
  version: number;
  parent_id: string | null;
  web_url: string;
  modified_at: string | null;
}

export interface WikiPage extends WikiPageListing {
  /** The body in storage format (XHTML with `ac:` and `ri:` elements). */
  storage: string;
}

export interface WikiAttachment {
  attachment_id: string;
  filename: string;
  media_type: string;
  file_size: number | null;
  /** Absolute URL. */
  download_link: string;
}

/** The wiki answered 401 or 403: no retry can fix the credentials. */
export class WikiAccessError extends Error {
  override name = 'WikiAccessError';
  readonly permanent = true;
}

/** A page or attachment the wiki does not have (any more). */
export class WikiNotFound extends Error {
  override name = 'WikiNotFound';
}

const PAGE_LIMIT = 100;

export interface ConfluenceClient {
  listPages(space: string, signal: AbortSignal): AsyncGenerator<WikiPageListing>;
  getPage(pageId: string, signal: AbortSignal): Promise<WikiPage>;
  listAttachments(pageId: string, signal: AbortSignal): AsyncGenerator<WikiAttachment>;
  /** Downloads through the link, following its redirect without the credentials. */
  download(link: string, signal: AbortSignal): Promise<WebResponse>;
}

/** Where the wiki lives: Cloud's API and page links are under /wiki, added to a bare site URL. */
export function wikiRoot(baseUrl: string, flavor: WikiFlavor): string {
  const trimmed = baseUrl.replace(/\/+$/, '');
  return flavor === 'cloud' && !trimmed.endsWith('/wiki') ? `${trimmed}/wiki` : trimmed;
}

export function createConfluenceClient(connection: WikiConnection, web: WebClient): ConfluenceClient {
  const base = new URL(connection.baseUrl.replace(/\/+$/, ''));
  const root = wikiRoot(connection.baseUrl, connection.flavor);
  const apiRoot = connection.flavor === 'cloud' ? `${root}/api/v2` : `${root}/rest/api`;
  const headers = (url: string) => ({ authorization: authorizationFor(connection.auth, url) });
  const listingOf = (page: Json, space: { id: string; key: string }) =>
    pageListing(page, space, connection.flavor, root);

  async function getJson(url: string, signal: AbortSignal): Promise<{ body: Json; response: WebResponse }> {
    const response = await web.get(url, signal, { originHeaders: headers(url), accept: 'application/json' });
    if (response.status === 401 || response.status === 403)
      throw new WikiAccessError(
        `${url} answered ${response.status}: check the wiki credentials and their permissions`,
      );
    if (response.status === 404) throw new WikiNotFound(`${url} answered 404`);
    if (response.status >= 300) throw new HttpFetchError(`${url} answered ${response.status}`);
    try {
      return { body: JSON.parse(response.body.toString('utf8')) as Json, response };
    } catch {
      throw new HttpFetchError(`${url} did not answer JSON`);
    }
  }

  /** Every result of a paged collection, following the next links. */
  async function* collection(first: string, signal: AbortSignal): AsyncGenerator<Json> {
    let next: string | undefined = first;
    const seen = new Set<string>();
    while (next) {
      if (seen.has(next)) throw new HttpFetchError(`${next}: the wiki sent the same next page twice`);
      seen.add(next);
      const { body, response } = await getJson(next, signal);
      const results = Array.isArray(body.results) ? (body.results as Json[]) : [];
      for (const result of results) yield result;
      const link = nextFromLinkHeader(response.headers.link) ?? stringAt(body, '_links', 'next');
      next = link && results.length > 0 ? absolute(link) : undefined;
    }
  }

  /** A relative link of the API (`/wiki/api/v2/...`, `/rest/api/...`) made absolute. */
  function absolute(link: string): string {
    if (/^https?:\/\//i.test(link)) return link;
    // v1 links are relative to the context path; v2 links start with /wiki.
    if (link.startsWith('/wiki/') || connection.flavor === 'cloud') return new URL(link, base.origin).href;
    return `${root}${link.startsWith('/') ? '' : '/'}${link}`;
  }

  async function cloudSpace(space: string, signal: AbortSignal): Promise<{ id: string; key: string }> {
    const query = /^\d+$/.test(space) ? `ids=${space}` : `keys=${encodeURIComponent(space)}`;
    const { body } = await getJson(`${apiRoot}/spaces?${query}`, signal);
    const found = (Array.isArray(body.results) ? (body.results as Json[]) : [])[0];
    if (!found)
      throw new WikiAccessError(`space ${space} does not exist or is not visible to these credentials`);
    return { id: String(found.id), key: String(found.key) };
  }

  return {
    async *listPages(space, signal) {
      if (connection.flavor === 'cloud') {
        const resolved = await cloudSpace(space, signal);
        const first = `${apiRoot}/spaces/${resolved.id}/pages?limit=${PAGE_LIMIT}&status=current`;
        for await (const page of collection(first, signal)) yield listingOf(page, resolved);
        return;
      }
      const first = `${apiRoot}/content?spaceKey=${encodeURIComponent(space)}&type=page&status=current&start=0&limit=${PAGE_LIMIT}&expand=version,ancestors,space`;
      for await (const page of collection(first, signal)) yield listingOf(page, { id: '', key: space });
    },

    async getPage(pageId, signal) {
      const id = encodeURIComponent(pageId);
      if (connection.flavor === 'cloud') {
        const { body } = await getJson(`${apiRoot}/pages/${id}?body-format=storage`, signal);
        const spaceId = String(body.spaceId ?? '');
        return {
          ...listingOf(body, { id: spaceId, key: '' }),
          storage: stringAt(body, 'body', 'storage', 'value') ?? '',
        };
      }
      const { body } = await getJson(
        `${apiRoot}/content/${id}?expand=body.storage,version,space,ancestors`,
        signal,
      );
      return {
        ...listingOf(body, { id: '', key: '' }),
        storage: stringAt(body, 'body', 'storage', 'value') ?? '',
      };
    },

    async *listAttachments(pageId, signal) {
      const id = encodeURIComponent(pageId);
      const first =
        connection.flavor === 'cloud'
          ? `${apiRoot}/pages/${id}/attachments?limit=${PAGE_LIMIT}`
          : `${apiRoot}/content/${id}/child/attachment?start=0&limit=${PAGE_LIMIT}`;
      for await (const attachment of collection(first, signal)) {
        const extensions = (attachment.extensions ?? {}) as Json;
        const link =
          connection.flavor === 'cloud'
            ? stringAt(attachment, 'downloadLink')
            : stringAt(attachment, '_links', 'download');
        if (!link) continue;
        const size = attachment.fileSize ?? extensions.fileSize;
        yield {
          attachment_id: String(attachment.id),
          filename: String(attachment.title ?? ''),
          media_type: String(attachment.mediaType ?? extensions.mediaType ?? 'application/octet-stream'),
          file_size: typeof size === 'number' ? size : null,
          // Download links are relative to the wiki root (`/download/attachments/...`).
          download_link: /^https?:\/\//i.test(link)
            ? link
            : `${root}${link.startsWith('/') ? '' : '/'}${link}`,
        };
      }
    },

    async download(link, signal) {
      const response = await web.get(link, signal, { originHeaders: headers(link) });
      if (response.status === 401 || response.status === 403)
        throw new WikiAccessError(`${link} answered ${response.status}: check the wiki credentials`);
      if (response.status === 404 || response.status === 410)
        throw new WikiNotFound(`${link} answered ${response.status}`);
      if (response.status >= 300) throw new HttpFetchError(`${link} answered ${response.status}`);
      return response;
    },
  };
}

type Json = Record<string, unknown>;

/** A page of either API (Cloud v2 or Data Center v1) as the listing the adapters read. */
function pageListing(
  page: Json,
  space: { id: string; key: string },
  flavor: WikiFlavor,
  root: string,
): WikiPageListing {
  if (flavor === 'cloud') {
    const version = (page.version ?? {}) as Json;
    return {
      page_id: String(page.id),
      space_id: String(page.spaceId ?? space.id),
      space_key: space.key,
      title: String(page.title ?? ''),
      version: Number(version.number ?? 1),
      parent_id: page.parentId ? String(page.parentId) : null,
      web_url: pageWebUrl(page, root),
      modified_at: typeof version.createdAt === 'string' ? version.createdAt : null,
    };
  }
  const version = (page.version ?? {}) as Json;
  const ancestors = Array.isArray(page.ancestors) ? (page.ancestors as Json[]) : [];
  const pageSpace = (page.space ?? {}) as Json;
  return {
    page_id: String(page.id),
    space_id: String(pageSpace.id ?? space.id),
    space_key: String(pageSpace.key ?? space.key),
    title: String(page.title ?? ''),
    version: Number(version.number ?? 1),
    parent_id: ancestors.length > 0 ? String(ancestors[ancestors.length - 1]?.id) : null,
    web_url: pageWebUrl(page, root),
    modified_at: typeof version.when === 'string' ? version.when : null,
  };
}

function pageWebUrl(page: Json, root: string): string {
  const webui = stringAt(page, '_links', 'webui') ?? '';
  return webui ? `${root}${webui.startsWith('/') ? '' : '/'}${webui}` : '';
}

function stringAt(value: unknown, ...path: string[]): string | undefined {
  let current: unknown = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Json)[key];
  }
  return typeof current === 'string' ? current : undefined;
}

/** The `rel="next"` target of a Link header (RFC 8288). */
export function nextFromLinkHeader(header: string | undefined): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(/,(?=\s*<)/)) {
    const match = /^\s*<([^>]*)>(.*)$/.exec(part);
    if (match && /;\s*rel="?next"?/i.test(match[2] as string)) return match[1];
  }
  return undefined;
}
