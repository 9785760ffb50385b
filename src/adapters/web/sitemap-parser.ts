import { gunzipSync } from 'node:zlib';
import { Type } from 'typebox';
import { looksBinary } from '../../http/charset.js';
import { parseRobots } from '../../http/robots.js';
import type { WebClient } from '../../http/web-client.js';
import { defineAdapter, MessageSkipped } from '../adapter.js';
import { parseSitemapXml } from './sitemap-xml.js';
import {
  compilePatterns,
  fetchConfigFields,
  megabytes,
  requireHttpUrl,
  urlFilter,
  webClientFromConfig,
} from './web-options.js';

export const sitemapParser = defineAdapter({
  type: 'sitemap_parser',
  group: 'web',
  summary: 'Fetch sitemap XML (indexes recursively, gzip, robots.txt Sitemap: lines) and emit its URLs.',
  description:
    'Input `{url}` (a sitemap, a sitemap index or a robots.txt whose `Sitemap:` lines are followed) or `{urls}`; ' +
    'falls back to the config `url`. Sitemap indexes are read breadth-first up to `max_depth` levels and `max_sitemaps` ' +
    'files, each visited once (loops end). Bodies may be gzip-compressed in transit or as .gz files; the decompressed ' +
    'size is capped by `max_sitemap_size_mb`. The XML reader refuses DOCTYPE/ENTITY declarations (no entity expansion, ' +
    'no external entities) and fails a truncated or foreign document with a message naming the problem. A top-level ' +
    'sitemap answering 404/410 is skipped; any other failed sitemap fails the message (no silent partial lists). ' +
    'URLs are deduplicated in order, filtered (`same_host_only`, `include`, `exclude`) and capped at `max_urls`. ' +
    'Emits one `{urls}`; counts go to the output metadata `sitemap`.',
  config: Type.Object(
    {
      url: Type.Optional(
        Type.String({ description: 'sitemap or robots.txt URL used when the input has none' }),
      ),
      max_urls: Type.Integer({
        minimum: 1,
        maximum: 1_000_000,
        default: 50_000,
        description: 'URLs emitted at most',
      }),
      max_depth: Type.Integer({
        minimum: 0,
        maximum: 10,
        default: 3,
        description: 'sitemap index levels followed below the input (0 = the input sitemaps only)',
      }),
      max_sitemaps: Type.Integer({
        minimum: 1,
        maximum: 10_000,
        default: 200,
        description: 'sitemap files read at most',
      }),
      max_sitemap_size_mb: Type.Number({
        exclusiveMinimum: 0,
        maximum: 200,
        default: 50,
        description: 'per sitemap, after decompression (the sitemaps.org limit is 50 MB)',
      }),
      include: Type.Array(Type.String(), {
        default: [],
        description: 'regexes; when given a URL must match one',
      }),
      exclude: Type.Array(Type.String(), {
        default: [],
        description: 'regexes; a URL matching one is dropped',
      }),
      same_host_only: Type.Boolean({
        default: true,
        description:
          'drop page URLs whose host differs from the input URL host, and refuse a sitemap or robots.txt redirected to another host',
      }),
      ...fetchConfigFields({ rateLimit: 2, timeoutSeconds: 30 }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({
    url: Type.Optional(Type.String({ description: 'sitemap, sitemap index or robots.txt URL' })),
    urls: Type.Optional(Type.Array(Type.String())),
  }),
  output: Type.Object({ urls: Type.Array(Type.String()) }),
  create: (config, resources) => {
    const maxBytes = megabytes(config.max_sitemap_size_mb);
    const client = webClientFromConfig(config, maxBytes, 'sitemap_parser', resources.settings);
    const accept = urlFilter(
      compilePatterns('include', config.include),
      compilePatterns('exclude', config.exclude),
    );

    return async (payload, context) => {
      const starts = startUrls(payload, config.url);
      const hosts = new Set(starts.map((start) => new URL(start).host));
      const urls = new Set<string>();
      const stats = { sitemaps_read: 0, urls_found: 0, urls_filtered: 0, invalid: 0, truncated: false };
      const visited = new Set<string>();
      let level: string[] = [];
      for (const start of starts) {
        if (new URL(start).pathname === '/robots.txt') {
          const listed = await sitemapsOfRobots(client, start, config.same_host_only, context.signal);
          level.push(...listed);
        } else level.push(start);
      }
      for (let depth = 0; level.length > 0 && !stats.truncated; depth++) {
        const next: string[] = [];
        for (const sitemapUrl of level) {
          if (visited.has(sitemapUrl)) continue;
          if (visited.size >= config.max_sitemaps) {
            throw new Error(
              `more than max_sitemaps (${config.max_sitemaps}) sitemap files; raise it or narrow the input`,
            );
          }
          visited.add(sitemapUrl);
          const parsed = await readSitemap(
            client,
            sitemapUrl,
            maxBytes,
            depth === 0,
            config.same_host_only,
            context.signal,
          );
          stats.sitemaps_read++;
          if (parsed.kind === 'sitemapindex') {
            if (depth >= config.max_depth) {
              throw new Error(
                `${sitemapUrl} is a sitemap index below max_depth (${config.max_depth}); raise max_depth`,
              );
            }
            for (const loc of parsed.locs) {
              const child = absoluteUrl(loc);
              if (child) next.push(child);
              else stats.invalid++;
            }
            continue;
          }
          for (const loc of parsed.locs) {
            const url = absoluteUrl(loc);
            if (!url) {
              stats.invalid++;
              continue;
            }
            stats.urls_found++;
            if ((config.same_host_only && !hosts.has(new URL(url).host)) || !accept(url)) {
              stats.urls_filtered++;
              continue;
            }
            if (urls.size >= config.max_urls) {
              stats.truncated = true;
              break;
            }
            urls.add(url);
          }
          if (stats.truncated) break;
        }
        level = next;
      }
      // Nothing to fetch: the message is skipped with the reason, so the run's outcome is
      // `empty` and says why, instead of an empty list going downstream as if work were done.
      if (urls.size === 0)
        throw new MessageSkipped(
          `${starts.join(', ')}: no page URL to fetch (${stats.sitemaps_read} sitemaps read, ` +
            `${stats.urls_found} URLs found, ${stats.urls_filtered} filtered by same_host_only/include/exclude)`,
        );
      return [{ payload: { urls: [...urls] }, metadata: { sitemap: { ...stats, urls_emitted: urls.size } } }];
    };
  },
});

function startUrls(payload: Record<string, unknown>, fallback: string | undefined): string[] {
  if (Array.isArray(payload.urls)) {
    if (payload.urls.length === 0) throw new Error('input `urls` is empty');
    return payload.urls.map((url, index) => requireHttpUrl({ [`urls[${index}]`]: url }, `urls[${index}]`));
  }
  if (payload.url === undefined && fallback !== undefined) return [requireHttpUrl({ url: fallback })];
  return [requireHttpUrl(payload)];
}

async function sitemapsOfRobots(
  client: WebClient,
  robotsUrl: string,
  sameHost: boolean,
  signal: AbortSignal,
): Promise<string[]> {
  const response = await client.get(robotsUrl, signal, { sameHost });
  if (response.status === 404 || response.status === 410) {
    throw new MessageSkipped(`${robotsUrl} answered ${response.status}`);
  }
  if (response.status !== 200) throw new Error(`${robotsUrl} answered ${response.status}`);
  const sitemaps = parseRobots(response.body.toString('utf8'))
    .sitemaps.map(absoluteUrl)
    .filter((url): url is string => url !== undefined);
  if (sitemaps.length === 0) throw new Error(`${robotsUrl} has no Sitemap: lines`);
  return sitemaps;
}

async function readSitemap(
  client: WebClient,
  url: string,
  maxBytes: number,
  topLevel: boolean,
  sameHost: boolean,
  signal: AbortSignal,
) {
  const response = await client.get(url, signal, { sameHost });
  if (topLevel && (response.status === 404 || response.status === 410)) {
    throw new MessageSkipped(`${url} answered ${response.status}`);
  }
  if (response.status !== 200) throw new Error(`sitemap ${url} answered ${response.status}`);
  let body = response.body;
  // A .gz file served as bytes (not Content-Encoding, which fetch already undid).
  if (body[0] === 0x1f && body[1] === 0x8b) {
    try {
      body = gunzipSync(body, { maxOutputLength: maxBytes });
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'ERR_BUFFER_TOO_LARGE') {
        throw new Error(`sitemap ${url} decompresses to more than the limit of ${maxBytes} bytes`);
      }
      throw new Error(`sitemap ${url} is not valid gzip: ${(error as Error).message}`);
    }
  }
  if (looksBinary(body)) throw new Error(`sitemap ${url} is binary data, not XML`);
  return parseSitemapXml(body.toString('utf8'), `sitemap ${url}`);
}

/** A sitemap `<loc>` as an absolute http(s) URL, or undefined (relative and other schemes are invalid). */
function absoluteUrl(loc: string): string | undefined {
  try {
    const url = new URL(loc);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}
