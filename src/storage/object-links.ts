/**
 * Links that open a source (issue 31): a citation of a file the service stored (a file-share
 * document, a wiki attachment, an upload) used to be its `file://` origin, which no browser
 * opens from an http page and no other system can reach. A source keeps its true origin in
 * `url` (provenance); its link is that origin when it is http(s), else the stored object
 * through the storage API, which serves the stored bytes (active types as attachments, under
 * a sandbox: src/api/browser-headers.ts).
 */
import type { Settings } from '../settings.js';

/** The API path of a stored object's bytes: each key segment percent-encoded, its slashes kept. */
export function storedObjectPath(key: string): string {
  return `/api/v1/storage/objects/${key.split('/').map(encodeURIComponent).join('/')}`;
}

export function isHttpUrl(value: string | null | undefined): value is string {
  if (typeof value !== 'string') return false;
  try {
    const protocol = new URL(value).protocol;
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * The link that opens a source: its URL when http(s), else its stored object's path under
 * `base` ('' = a path relative to the service's own origin, for answers of the API itself;
 * `publicBaseUrl(settings)` for what is published elsewhere), else null.
 */
export function sourceLink(url: string | null | undefined, objectKey: string | null | undefined, base = '') {
  if (isHttpUrl(url)) return url;
  return objectKey ? `${base}${storedObjectPath(objectKey)}` : null;
}

const wildcardLoopback: Record<string, string> = { '0.0.0.0': '127.0.0.1', '::': '::1', '': '127.0.0.1' };

/**
 * The address other systems reach the service at, without a trailing slash: `public_url`
 * (WEIR_PUBLIC_URL), else http://HOST:PORT (a wildcard bind named by its loopback address).
 */
export function publicBaseUrl(settings: Pick<Settings, 'public_url' | 'host' | 'port'>): string {
  if (settings.public_url) return settings.public_url.replace(/\/+$/, '');
  const host = wildcardLoopback[settings.host] ?? settings.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${settings.port}`;
}
