/**
 * Publishes concept pages to a Confluence space: Cloud REST v2 (`/wiki/api/v2/pages`) or
 * Data Center REST v1 (`/rest/api/content`). A page is found by its id from the last
 * publication, else by title in the space; it is created, or updated with the next version
 * number. A 409 (someone else saved a version meanwhile) is retried with the version read
 * again; 429 and 503 wait for Retry-After (json-request.ts).
 *
 * The page body is storage format (XHTML) rendered from the markdown by marked; links
 * between concept pages (`[Name](slug.md)`) become Confluence page links by title.
 */
import { marked } from 'marked';
import {
  failure,
  type KnowledgeBase,
  type PageToPublish,
  type PublishedState,
  PublishFailed,
} from '../consolidation/knowledge-base.js';
import type { JsonRequestOptions, JsonResponse } from '../http/json-request.js';
import { jsonRequest } from '../http/json-request.js';
import { authorizationFor, type WikiAuth, type WikiFlavor, wikiRoot } from './confluence.js';

export interface ConfluenceTarget {
  baseUrl: string;
  flavor: WikiFlavor;
  auth: WikiAuth;
  spaceKey: string;
  parentPageId?: string | undefined;
  /** Put before every page title (titles are unique per space). */
  titlePrefix: string;
}

type Json = Record<string, unknown>;

/** The HTTP requests (retries included) one publish or remove has made so far. */
interface Tally {
  requests: number;
}

const maxConflictRetries = 3;

export function createConfluencePublisher(
  target: ConfluenceTarget,
  request: Omit<JsonRequestOptions, 'signal'>,
): KnowledgeBase {
  const root = wikiRoot(target.baseUrl, target.flavor);
  const cloud = target.flavor === 'cloud';
  let spaceId: Promise<string> | undefined;

  /**
   * One request; `tally` counts the attempts of the operation it belongs to (one tally per
   * publish or remove, so concurrent operations do not count each other's requests).
   */
  async function call(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    signal: AbortSignal,
    tally: Tally,
    body?: unknown,
  ) {
    const url = `${root}${path}`;
    const response = await jsonRequest(
      {
        method,
        url,
        headers: { authorization: authorizationFor(target.auth, url) },
        ...(body !== undefined ? { body } : {}),
      },
      { ...request, signal },
    );
    tally.requests += response.attempts;
    if (response.status === 401 || response.status === 403)
      throw new PublishFailed(
        `${method} ${url} answered ${response.status}: check the wiki credentials and their permissions`,
        true,
      );
    return response;
  }

  function cloudSpaceId(signal: AbortSignal, tally: Tally): Promise<string> {
    spaceId ??= call('GET', `/api/v2/spaces?keys=${encodeURIComponent(target.spaceKey)}`, signal, tally).then(
      (response) => {
        const id = (((response.body as Json)?.results as Json[] | undefined)?.[0] as Json | undefined)?.id;
        if (response.status !== 200 || id === undefined)
          throw new PublishFailed(`space ${target.spaceKey} was not found at ${root}`, true);
        return String(id);
      },
    );
    spaceId.catch(() => {
      spaceId = undefined;
    });
    return spaceId;
  }

  /** The page's id and current version, by id or else by title. */
  async function current(
    title: string,
    known: PublishedState | undefined,
    signal: AbortSignal,
    tally: Tally,
  ) {
    if (known?.page_id) {
      const path = cloud
        ? `/api/v2/pages/${known.page_id}`
        : `/rest/api/content/${known.page_id}?expand=version`;
      const response = await call('GET', path, signal, tally);
      if (response.status === 200) return pageState(response.body as Json);
      if (response.status !== 404) throw failure(`GET ${root}${path}`, response);
    }
    const path = cloud
      ? `/api/v2/pages?space-id=${await cloudSpaceId(signal, tally)}&title=${encodeURIComponent(title)}`
      : `/rest/api/content?spaceKey=${encodeURIComponent(target.spaceKey)}&title=${encodeURIComponent(title)}&expand=version`;
    const response = await call('GET', path, signal, tally);
    if (response.status !== 200) throw failure(`GET ${root}${path}`, response);
    const first = ((response.body as Json).results as Json[] | undefined)?.[0];
    return first ? pageState(first) : undefined;
  }

  async function pageBody(page: PageToPublish, title: string, signal: AbortSignal, tally: Tally) {
    const spaceId = cloud ? await cloudSpaceId(signal, tally) : undefined;
    return newPageBody(target, title, storageFormat(page.markdown, target.titlePrefix), spaceId);
  }
  const webUrl = (body: Json | undefined, id: string) => pageUrl(root, body, id);

  return {
    target: `confluence ${root} ${target.spaceKey}`,
    async publish(page, known, signal) {
      const tally: Tally = { requests: 0 };
      const title = `${target.titlePrefix}${page.title}`;
      const body = await pageBody(page, title, signal, tally);
      let existing = await current(title, known, signal, tally);
      if (!existing) {
        const response = await call(
          'POST',
          cloud ? '/api/v2/pages' : '/rest/api/content',
          signal,
          tally,
          body,
        );
        if (response.status !== 200 && response.status !== 201)
          throw failure(`POST a page to ${root}`, response);
        const created = pageState(response.body as Json);
        return {
          action: 'created',
          page_id: created.id,
          version: created.version,
          url: webUrl(response.body as Json, created.id),
          requests: tally.requests,
        };
      }
      for (let attempt = 0; ; attempt++) {
        const path = cloud ? `/api/v2/pages/${existing.id}` : `/rest/api/content/${existing.id}`;
        const version = { number: existing.version + 1, message: `map version ${page.map_version}` };
        const response: JsonResponse = await call('PUT', path, signal, tally, {
          id: existing.id,
          ...body,
          version,
        });
        if (response.status === 200) {
          return {
            action: 'updated',
            page_id: existing.id,
            version: version.number,
            url: webUrl(response.body as Json, existing.id),
            requests: tally.requests,
          };
        }
        if (response.status !== 409 || attempt >= maxConflictRetries)
          throw failure(`PUT ${root}${path}`, response);
        const fresh = await current(title, { page_id: existing.id }, signal, tally);
        if (!fresh) throw new PublishFailed(`page ${existing.id} disappeared during the update`, false);
        existing = fresh;
      }
    },
    async remove(_slug, title, known, signal) {
      const tally: Tally = { requests: 0 };
      const existing = await current(`${target.titlePrefix}${title}`, known, signal, tally);
      if (!existing) return { removed: false, requests: tally.requests };
      const path = cloud ? `/api/v2/pages/${existing.id}` : `/rest/api/content/${existing.id}`;
      const response = await call('DELETE', path, signal, tally);
      if (response.status === 404) return { removed: false, requests: tally.requests };
      if (response.status >= 300) throw failure(`DELETE ${root}${path}`, response);
      return { removed: true, requests: tally.requests };
    },
  };
}

function pageState(page: Json): { id: string; version: number } {
  return { id: String(page.id), version: Number((page.version as Json | undefined)?.number ?? 1) };
}

/** The body of a page to create or update: Cloud's v2 shape when `spaceId` is given, else v1's. */
function newPageBody(target: ConfluenceTarget, title: string, storage: string, spaceId: string | undefined) {
  if (spaceId !== undefined)
    return {
      spaceId,
      status: 'current',
      title,
      ...(target.parentPageId ? { parentId: target.parentPageId } : {}),
      body: { representation: 'storage', value: storage },
    };
  return {
    type: 'page',
    title,
    space: { key: target.spaceKey },
    ...(target.parentPageId ? { ancestors: [{ id: target.parentPageId }] } : {}),
    body: { storage: { value: storage, representation: 'storage' } },
  };
}

/** The page's web link from an answer's `_links.webui`, or the view-by-id link without one. */
function pageUrl(root: string, body: Json | undefined, id: string): string {
  const webui = ((body?._links as Json | undefined)?.webui as string | undefined) ?? undefined;
  return webui ? `${root}${webui}` : `${root}/pages/viewpage.action?pageId=${id}`;
}

/** Markdown to Confluence storage format (XHTML), concept links as page links by title. */
export function storageFormat(markdown: string, titlePrefix: string): string {
  const html = marked.parse(markdown, { async: false, gfm: true }) as string;
  return html
    .replace(/<a href="([a-z0-9-]+)\.md">([^<]*)<\/a>/g, (_, _slug: string, text: string) => {
      const title = escapeAttribute(`${titlePrefix}${decodeEntities(text)}`);
      return `<ac:link><ri:page ri:content-title="${title}" /><ac:plain-text-link-body><![CDATA[${decodeEntities(text)}]]></ac:plain-text-link-body></ac:link>`;
    })
    .replace(/<(br|hr|img[^>]*?)\s*>/g, '<$1 />');
}

function decodeEntities(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}
