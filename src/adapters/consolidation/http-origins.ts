/**
 * Which http(s) sources are gone at their origin. A crawled page is stored once and stays in
 * storage and in the manifest after the site took it down, so knowledge_diff kept it in the
 * concept map, cited, run after run. Gone means one of:
 *
 * - its origin's sitemaps (the `origin_sitemaps` given) were all read and none lists it: the
 *   site says which pages it has, with no request per page;
 * - its URL answers 404 or 410 (after the redirects the web client follows): the site says
 *   the page is not there.
 *
 * Anything else keeps the source: a 2xx or a redirect to a live page, 401 and 403 (a page behind
 * a login, such as a wiki's or SharePoint's), 429 and 5xx after the retries, a timeout, a
 * refused or failed connection, robots.txt disallowing the check. A site that cannot be asked
 * at the moment must not empty the knowledge base.
 */
import { gunzipSync } from 'node:zlib';
import type { WebClient } from '../../http/web-client.js';
import { parseSitemapXml } from '../web/sitemap-xml.js';

export interface OriginCheck {
  /** GET each http(s) source not settled by a sitemap. */
  checkPages: boolean;
  /** Sitemaps whose listings say which pages of their origin exist. */
  sitemaps: readonly string[];
  maxBytes: number;
}

export interface OriginReport {
  /** Source URLs gone at their origin. */
  gone: Set<string>;
  /** Page requests made. */
  requests: number;
  /** Sitemaps that could not be read (their origin is then checked page by page). */
  unreadSitemaps: string[];
}

/** The http(s) URLs of `urls` that are gone at their origin (see the module comment). */
export async function goneAtHttpOrigin(
  urls: readonly string[],
  client: WebClient,
  check: OriginCheck,
  signal: AbortSignal,
): Promise<OriginReport> {
  const report: OriginReport = { gone: new Set(), requests: 0, unreadSitemaps: [] };
  const httpUrls = urls.filter((url) => /^https?:\/\//i.test(url));
  if (httpUrls.length === 0) return report;
  const listed = await sitemapListings(client, check, signal, report);
  for (const url of httpUrls) {
    const origin = originOf(url);
    const listing = origin ? listed.get(origin) : undefined;
    if (listing) {
      if (!listing.has(normalised(url))) report.gone.add(url);
      continue;
    }
    if (!check.checkPages) continue;
    report.requests += 1;
    if (await answersGone(client, url, signal)) report.gone.add(url);
  }
  return report;
}

async function answersGone(client: WebClient, url: string, signal: AbortSignal): Promise<boolean> {
  try {
    const response = await client.get(url, signal);
    return response.status === 404 || response.status === 410;
  } catch (error) {
    if (signal.aborted) throw error;
    // Robots.txt disallowing it, a timeout, a refused connection, a body over the limit: the
    // page may well be there.
    return false;
  }
}

/**
 * The URLs each origin's sitemaps list (a sitemap index's children included), by origin; an
 * origin one of whose sitemaps could not be read completely is left out, so its pages are
 * checked one by one rather than judged from half a listing.
 */
async function sitemapListings(
  client: WebClient,
  check: OriginCheck,
  signal: AbortSignal,
  report: OriginReport,
): Promise<Map<string, Set<string>>> {
  const listings = new Map<string, Set<string>>();
  const failed = new Set<string>();
  for (const sitemap of check.sitemaps) {
    const origin = originOf(sitemap);
    if (!origin) continue;
    const locs = await readListing(client, sitemap, check.maxBytes, signal);
    if (!locs) {
      failed.add(origin);
      report.unreadSitemaps.push(sitemap);
      continue;
    }
    const listing = listings.get(origin) ?? new Set<string>();
    for (const loc of locs) listing.add(normalised(loc));
    listings.set(origin, listing);
  }
  for (const origin of failed) listings.delete(origin);
  return listings;
}

/** A sitemap's page URLs, one level of sitemap index followed; undefined when any part fails. */
async function readListing(
  client: WebClient,
  url: string,
  maxBytes: number,
  signal: AbortSignal,
  depth = 0,
): Promise<string[] | undefined> {
  try {
    const response = await client.get(url, signal, { sameHost: true });
    if (response.status !== 200) return undefined;
    let body = response.body;
    if (body[0] === 0x1f && body[1] === 0x8b) body = gunzipSync(body, { maxOutputLength: maxBytes });
    const parsed = parseSitemapXml(body.toString('utf8'), `sitemap ${url}`);
    if (parsed.kind === 'urlset') return parsed.locs;
    if (depth > 0) return undefined;
    const pages: string[] = [];
    for (const child of parsed.locs) {
      const locs = await readListing(client, child, maxBytes, signal, depth + 1);
      if (!locs) return undefined;
      pages.push(...locs);
    }
    return pages;
  } catch (error) {
    if (signal.aborted) throw error;
    return undefined;
  }
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/** A URL as sitemaps and crawls may both write it: no fragment, the host in lower case. */
function normalised(url: string): string {
  try {
    const parsed = new URL(url.trim());
    parsed.hash = '';
    return parsed.href;
  } catch {
    return url.trim();
  }
}
