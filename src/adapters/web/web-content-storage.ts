import { Type } from 'typebox';
import { defineAdapter } from '../adapter.js';
import { urlHash } from './web-options.js';

export const webContentStorage = defineAdapter({
  type: 'web_content_storage',
  group: 'web',
  summary: 'Persist fetched HTML with its URL, status and headers in the sidecar.',
  description:
    'Input `{url, html, status, headers}` (web_scraper or web_crawler). Writes the HTML as UTF-8 to ' +
    '`<sha256 of url>.html` (content type text/html; charset=utf-8), so fetching the same URL again rewrites the ' +
    'same object; the sidecar holds `url`, `status`, `fetched_at` and the `headers_kept` subset of the headers. ' +
    'Emits `{storage_key, url, content_length}` (bytes written).',
  config: Type.Object(
    {
      headers_kept: Type.Array(Type.String({ minLength: 1 }), {
        default: ['content-type', 'content-language', 'last-modified', 'etag', 'date'],
        description: 'response headers copied into the sidecar (case-insensitive)',
      }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({
    url: Type.String(),
    html: Type.String(),
    status: Type.Optional(Type.Integer()),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  }),
  output: Type.Object({ storage_key: Type.String(), url: Type.String(), content_length: Type.Integer() }),
  create: (config, resources) => {
    const kept = config.headers_kept.map((name) => name.toLowerCase());
    return async (payload, context) => {
      const { url, html, status, headers } = payload as Record<string, unknown>;
      if (typeof url !== 'string' || url === '' || typeof html !== 'string') {
        throw new Error('input needs `url` and `html` strings (the web_scraper or web_crawler payload)');
      }
      const headerSubset: Record<string, string> = {};
      if (headers && typeof headers === 'object') {
        for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
          if (kept.includes(name.toLowerCase()) && typeof value === 'string')
            headerSubset[name.toLowerCase()] = value;
        }
      }
      const body = Buffer.from(html, 'utf8');
      const info = await context.writeObject(`${urlHash(url)}.html`, body, {
        contentType: 'text/html; charset=utf-8',
        metadata: {
          url,
          status: typeof status === 'number' ? status : null,
          headers: headerSubset,
          fetched_at: resources.now().toISOString(),
        },
      });
      return [{ payload: { storage_key: info.key, url, content_length: body.length } }];
    };
  },
});
