/**
 * A page's declared translations: `<link rel="alternate" hreflang="nb" href="...">` in its head,
 * or the same in its HTTP `Link:` header (`<https://example.org/nb/a>; rel="alternate"; hreflang="nb"`).
 * Sites whose URLs carry no language folder (`/help/a.html?lang=nb`, `nb.example.com/a`,
 * `/a.nb.html`) announce their copies so; search reads the set as one page in several
 * languages (search-index/language.ts, pageIdentity).
 *
 * Kept: each hreflang code (lower case, `x-default` included) with its href resolved against
 * the page URL, http(s) only, without its fragment, on the page's site (the same host or a
 * sibling under the same parent domain, `www.` aside: `nb.example.com` for `example.com`) or
 * a `canonical_hosts` one. The first href of a code wins. Bounded: at most `maxAlternates`
 * codes are kept and `maxAlternateLinks` links read, so a hostile head of a million links
 * costs no more than a page's worth.
 */

import { isWebUrl, parseUrl, siteHost } from './web-url.js';

export const maxAlternates = 50;
export const maxAlternateLinks = 500;

export interface AlternateLink {
  hreflang: string;
  href: string;
}

/** The declared alternates by code, or undefined when none is kept. */
export function pageAlternates(
  links: readonly AlternateLink[],
  pageUrl: string | undefined,
  allowedHosts: readonly string[] = [],
): Record<string, string> | undefined {
  const base = parseUrl(pageUrl);
  if (!base || !isWebUrl(base)) return undefined;
  const kept: Record<string, string> = {};
  let count = 0;
  for (const link of links.slice(0, maxAlternateLinks)) {
    if (count >= maxAlternates) break;
    const code = link.hreflang.trim().toLowerCase();
    if (!/^(?:[a-z]{2,3}(?:[-_][a-z0-9]{2,8}){0,2}|x-default)$/.test(code) || Object.hasOwn(kept, code))
      continue;
    const target = parseUrl(link.href.trim(), base);
    if (!target || !isWebUrl(target) || !sameSite(target.hostname, base.hostname, allowedHosts)) continue;
    target.hash = '';
    kept[code] = target.href;
    count++;
  }
  return count > 0 ? kept : undefined;
}

/** Longest `Link:` header value read; the rest is ignored. */
const maxLinkHeaderChars = 64 * 1024;

/**
 * The hreflang alternates of an HTTP `Link:` header value (RFC 8288: comma-separated
 * `<uri>; param=value` entries), in order, at most maxAlternateLinks; others are skipped.
 */
export function linkHeaderAlternates(value: string | undefined): AlternateLink[] {
  if (!value) return [];
  const text = value.slice(0, maxLinkHeaderChars);
  const links: AlternateLink[] = [];
  // One pass: each entry is `<uri>` and the parameters up to the next `<` (no regex over the
  // whole value, whose backtracking on `<<<<...` would be quadratic).
  let at = 0;
  while (links.length < maxAlternateLinks) {
    const open = text.indexOf('<', at);
    const close = open < 0 ? -1 : text.indexOf('>', open + 1);
    if (close < 0) break;
    const next = text.indexOf('<', close + 1);
    const params = new Map<string, string>();
    for (const param of text.slice(close + 1, next < 0 ? undefined : next).matchAll(linkParam))
      params.set((param[1] ?? '').toLowerCase(), (param[2] ?? param[3] ?? '').trim());
    const rel = (params.get('rel') ?? '').toLowerCase().split(/\s+/);
    const hreflang = params.get('hreflang');
    if (rel.includes('alternate') && hreflang) links.push({ hreflang, href: text.slice(open + 1, close) });
    if (next < 0) break;
    at = next;
  }
  return links;
}

const linkParam = /;\s*([a-z*-]+)\s*=\s*(?:"([^"]*)"|([^;,"]*))/gi;

function sameSite(host: string, pageHost: string, allowedHosts: readonly string[]): boolean {
  const site = siteOf(host);
  return site === siteOf(pageHost) || allowedHosts.some((entry) => siteOf(entry) === site);
}

/** The parent domain of a host (`nb.docs.example.com` -> `docs.example.com`), or the host itself when it has two labels or fewer. */
function siteOf(hostname: string): string {
  const labels = siteHost(hostname).split('.');
  return labels.length > 2 ? labels.slice(1).join('.') : labels.join('.');
}
