/**
 * Where kbase_writer publishes concept pages: the port, and the generic HTTP JSON target
 * (PUT `<url>/<slug>` with the page, DELETE `<url>/<slug>` for a concept that is gone).
 * Confluence is the other target (src/wiki/confluence-publisher.ts).
 */
import type { JsonRequestOptions, JsonResponse } from '../http/json-request.js';
import { jsonRequest } from '../http/json-request.js';

export interface PageToPublish {
  slug: string;
  title: string;
  markdown: string;
  content_hash: string;
  /** `url`: the origin (a file:// path for a shared file); `link`: http(s), opens it (`sourceLink`). */
  sources: { source_id: string; title: string; url: string | null; link: string | null }[];
  map_version: number;
}

/** What the target said about a page last time (kept in the step's sync state). */
export interface PublishedState {
  page_id?: string | undefined;
  version?: number | undefined;
  url?: string | undefined;
}

export interface PublishResult extends PublishedState {
  action: 'created' | 'updated';
  /** HTTP requests made, retries included. */
  requests: number;
}

export interface RemoveResult {
  removed: boolean;
  /** HTTP requests made, retries included. */
  requests: number;
}

export interface KnowledgeBase {
  /** For messages and the sync-state scope: which target this is. */
  readonly target: string;
  publish(
    page: PageToPublish,
    known: PublishedState | undefined,
    signal: AbortSignal,
  ): Promise<PublishResult>;
  /** Removes the page; `removed` false when the target did not have it. */
  remove(
    slug: string,
    title: string,
    known: PublishedState | undefined,
    signal: AbortSignal,
  ): Promise<RemoveResult>;
}

export class PublishFailed extends Error {
  override name = 'PublishFailed';
  constructor(
    message: string,
    /** 4xx other than 408/429: retrying will not help. */
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

export function failure(what: string, response: JsonResponse): PublishFailed {
  const detail = typeof response.body === 'string' ? response.body : JSON.stringify(response.body ?? '');
  const status = response.status;
  return new PublishFailed(
    `${what} answered HTTP ${status}${detail ? `: ${detail.slice(0, 200)}` : ''}`,
    status >= 400 && status < 500 && status !== 408 && status !== 429,
  );
}

export function createHttpKnowledgeBase(options: {
  url: string;
  /**
   * The bearer token for a request to `url`, asked for on every request (a secret bound to its
   * origins refuses a URL outside them); absent = no Authorization header.
   */
  token?: ((url: string) => string) | undefined;
  request: Omit<JsonRequestOptions, 'signal'>;
}): KnowledgeBase {
  const base = options.url.replace(/\/+$/, '');
  const pageUrl = (slug: string) => `${base}/${encodeURIComponent(slug)}`;
  const headersFor = (url: string): Record<string, string> =>
    options.token ? { authorization: `Bearer ${options.token(url)}` } : {};
  return {
    target: `http ${base}`,
    async publish(page, _known, signal) {
      const response = await jsonRequest(
        { method: 'PUT', url: pageUrl(page.slug), headers: headersFor(pageUrl(page.slug)), body: page },
        { ...options.request, signal },
      );
      if (response.status >= 300) throw failure(`PUT ${pageUrl(page.slug)}`, response);
      return {
        action: response.status === 201 ? 'created' : 'updated',
        url: pageUrl(page.slug),
        requests: response.attempts,
      };
    },
    async remove(slug, _title, _known, signal) {
      const response = await jsonRequest(
        { method: 'DELETE', url: pageUrl(slug), headers: headersFor(pageUrl(slug)) },
        { ...options.request, signal },
      );
      if (response.status === 404 || response.status === 410)
        return { removed: false, requests: response.attempts };
      if (response.status >= 300) throw failure(`DELETE ${pageUrl(slug)}`, response);
      return { removed: true, requests: response.attempts };
    },
  };
}
