import { Type } from 'typebox';
import { defineAdapter } from '../adapter.js';
import { fetchResponse } from './page-fetch.js';
import { fetchConfigFields, megabytes, requireHttpUrl, urlHash, webClientFromConfig } from './web-options.js';

const PDF_MAGIC = Buffer.from('%PDF-');

export const pdfFetcher = defineAdapter({
  type: 'pdf_fetcher',
  group: 'web',
  summary: 'Download a crawl-discovered PDF into storage for document_converter.',
  description:
    'Input `{url}` (web_crawler fans PDF links out to it). Downloads through the same HTTP layer as web_scraper ' +
    '(robots.txt, adaptive per-host `rate_limit`, redirects, `request_timeout`), aborting past `max_pdf_size_mb`. ' +
    'The body must start with `%PDF-`, else the message fails. Writes `<sha256 of url>.pdf` (application/pdf; the ' +
    'sidecar holds the URL, and the final URL after redirects) and emits `{storage_key, url, content_length, ' +
    'content_type}`. 404/410 and robots-disallowed URLs are skipped.',
  config: Type.Object(
    {
      max_pdf_size_mb: Type.Number({
        exclusiveMinimum: 0,
        maximum: 1024,
        default: 50,
        description: 'larger downloads are aborted and fail',
      }),
      ...fetchConfigFields({ rateLimit: 1, timeoutSeconds: 60 }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({ url: Type.String() }),
  output: Type.Object({
    storage_key: Type.String(),
    url: Type.String(),
    content_length: Type.Integer(),
    content_type: Type.String(),
  }),
  create: (config, resources) => {
    const client = webClientFromConfig(
      config,
      megabytes(config.max_pdf_size_mb),
      'pdf_fetcher',
      resources.settings,
    );
    return async (payload, context) => {
      const url = requireHttpUrl(payload);
      const response = await fetchResponse(client, url, context.signal);
      if (!response.body.subarray(0, PDF_MAGIC.length).equals(PDF_MAGIC)) {
        const type = response.headers['content-type'] ?? 'no content type';
        throw new Error(`${response.url} is not a PDF: the body does not start with %PDF- (${type})`);
      }
      const info = await context.writeObject(`${urlHash(url)}.pdf`, response.body, {
        contentType: 'application/pdf',
        metadata: { url, ...(response.url !== url ? { final_url: response.url } : {}) },
      });
      return [
        {
          payload: {
            storage_key: info.key,
            url,
            content_length: response.body.length,
            content_type: 'application/pdf',
          },
        },
      ];
    };
  },
});
