import { Type } from 'typebox';
import { defineAdapter } from '../adapter.js';
import { fetchResponse, pageText, publicHeaders } from './page-fetch.js';
import { fetchConfigFields, megabytes, requireHttpUrl, webClientFromConfig } from './web-options.js';

export const webScraper = defineAdapter({
  type: 'web_scraper',
  group: 'web',
  summary:
    'HTTP GET of a page with adaptive per-host rate limiting, robots.txt, redirects and charset decoding.',
  description:
    'Input `{url}`. Requests to a host are paced at `rate_limit` per second; a 429 or 503 halves the rate and blocks ' +
    'the host until its `Retry-After` (seconds or HTTP date) has passed, after which the request is retried (up to ' +
    '`max_retries`); healthy answers raise the rate back. The limiter and the robots.txt cache live as long as the ' +
    'adapter instance, across messages. robots.txt is obeyed by default and re-checked on each redirect hop: a ' +
    'disallowed URL is skipped with the rule in the reason. 404 and 410 are skipped; other 4xx, and 429/5xx after the ' +
    'retries, fail. The body is capped at `max_body_size_mb` (the stream is aborted) and must be text: binary bytes ' +
    'served as HTML fail. Text is decoded by the Content-Type charset, then <meta charset>/http-equiv, then the BOM, ' +
    'else UTF-8. Emits `{url, html, status, headers}`: `url` is the address after redirects (the input URL is kept in ' +
    'metadata `requested_url` when they differ), headers are lower-cased, without set-cookie.',
  config: Type.Object(
    {
      max_body_size_mb: Type.Number({
        exclusiveMinimum: 0,
        maximum: 512,
        default: 10,
        description: 'larger bodies fail (after decompression)',
      }),
      ...fetchConfigFields({ rateLimit: 2, timeoutSeconds: 30 }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({ url: Type.String() }),
  output: Type.Object({
    url: Type.String(),
    html: Type.String(),
    status: Type.Integer(),
    headers: Type.Record(Type.String(), Type.String()),
  }),
  create: (config, resources) => {
    const client = webClientFromConfig(
      config,
      megabytes(config.max_body_size_mb),
      'web_scraper',
      resources.settings,
    );
    return async (payload, context) => {
      const url = requireHttpUrl(payload);
      const response = await fetchResponse(client, url, context.signal);
      const { html, charset } = pageText(response);
      return [
        {
          payload: {
            url: response.url,
            html,
            status: response.status,
            headers: publicHeaders(response.headers),
          },
          metadata: {
            charset,
            ...(response.url !== url ? { requested_url: url } : {}),
          },
        },
      ];
    };
  },
});
