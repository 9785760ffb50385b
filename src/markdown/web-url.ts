/**
 * The URL handling shared by what a page declares about itself: its canonical URL
 * (canonical-url.ts) and its translations (page-alternates.ts). Each keeps its own rule for
 * which hosts count as the page's site; both read hosts through siteHost.
 */

/** `value` resolved against `base`, or undefined when it is no URL. */
export function parseUrl(value: string | undefined, base?: URL): URL | undefined {
  if (!value) return undefined;
  try {
    return new URL(value, base);
  } catch {
    return undefined;
  }
}

export function isWebUrl(url: URL): boolean {
  return url.protocol === 'http:' || url.protocol === 'https:';
}

/** A host as a site: lower case, trimmed, `www.` aside (`www.example.com` is `example.com`). */
export function siteHost(hostname: string): string {
  return hostname
    .trim()
    .toLowerCase()
    .replace(/^www\./, '');
}
