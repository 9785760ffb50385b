/**
 * Links the console makes from data (a source's URL, a citation): only http(s) ones and paths
 * of the console's own origin. A crawled page or a config can name any URL, and `javascript:`
 * in an href runs as the console, with the API key in its session. No DOM here, so the tests
 * run it in Node.
 */

/** The URL, normalised, when it is absolute http: or https:; undefined for anything else. */
export function httpUrl(value: string | null | undefined): string | undefined {
  if (typeof value !== 'string') return undefined;
  let url: URL;
  try {
    // Parsed the way the browser will parse the href: tabs and newlines inside are dropped,
    // leading spaces trimmed, and the scheme compared case-insensitively.
    url = new URL(value);
  } catch {
    return undefined;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
}

/** A stand-in origin to resolve paths against: only its identity matters. */
const ownOrigin = 'https://console.invalid';

/**
 * A path of the console's own origin (`/api/v1/storage/objects/<key>`, as a source's `link`
 * names a stored object), normalised, or undefined. Parsed the way the browser resolves an
 * href, so `//host`, `/\host` and `/\t/host` (another host) and `/.//host` (a path that
 * normalises to `//host`, which the browser would read as another host) are refused.
 */
export function sameOriginPath(value: string | null | undefined): string | undefined {
  if (typeof value !== 'string') return undefined;
  let url: URL;
  try {
    url = new URL(value, `${ownOrigin}/`);
  } catch {
    return undefined;
  }
  if (url.origin !== ownOrigin || url.pathname.startsWith('//')) return undefined;
  return `${url.pathname}${url.search}${url.hash}`;
}

/** An href for a link made from data: absolute http(s) (`httpUrl`) or a same-origin path. */
export function linkUrl(value: string | null | undefined): string | undefined {
  return httpUrl(value) ?? (value?.trimStart().startsWith('/') ? sameOriginPath(value) : undefined);
}

export interface CitedSource {
  url: string | null;
  object_key: string | null;
  link?: string | null | undefined;
}

/**
 * Where a search result or a citation opens: its http(s) origin; else, for what the service
 * stored (a shared file, an attachment, an upload: its url is `file://` or none), the
 * console's view of the stored object, which fetches it with the console's API key; else the
 * answer's `link` when it is a same-origin path. A `file://` URL is never a link: browsers
 * block it from an http page.
 */
export function sourceHref(source: CitedSource): string | undefined {
  const origin = httpUrl(source.url);
  if (origin) return origin;
  if (source.object_key) return `#/storage/?object=${encodeURIComponent(source.object_key)}`;
  return linkUrl(source.link);
}
