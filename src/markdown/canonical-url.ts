import { isWebUrl, parseUrl, siteHost } from './web-url.js';

/**
 * Which URL names a fetched page: its declared canonical (`<link rel=canonical>`, else
 * `og:url`) or the URL it was fetched from. Packaged documentation declares `file://` paths and
 * mirrors declare the upstream site, so a declared URL wins only when
 * - it is http(s) (relative ones are resolved against the fetched URL first), and
 * - it is on the fetched page's host (`www.` aside; http to https is the same site), or on a
 *   host the config allows (`canonical_hosts`).
 * Otherwise the fetched URL stays. Without a fetched URL (a page read from storage) any
 * http(s) canonical is taken, since there is nothing better to cite.
 */
export function chooseCanonicalUrl(
  declared: string | undefined,
  fetched: string | undefined,
  allowedHosts: readonly string[] = [],
): string | undefined {
  const fetchedUrl = parseUrl(fetched);
  const candidate = declared?.trim() ? parseUrl(declared.trim(), fetchedUrl) : undefined;
  if (!candidate || !isWebUrl(candidate)) return fetchedUrl?.href ?? (fetched || undefined);
  if (!fetchedUrl) return candidate.href;
  const host = siteHost(candidate.hostname);
  const allowed =
    host === siteHost(fetchedUrl.hostname) || allowedHosts.some((entry) => siteHost(entry) === host);
  return allowed ? candidate.href : fetchedUrl.href;
}
