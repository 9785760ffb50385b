/**
 * What web_scraper does with one URL, shared with web_crawler's status policy: 404/410 are
 * skipped, other answers outside 2xx fail with the status, bodies must be text.
 */
import { decodeBody, looksBinary } from '../../http/charset.js';
import { RobotsDisallowed, type WebClient, type WebResponse } from '../../http/web-client.js';
import { MessageSkipped } from '../adapter.js';

export async function fetchResponse(
  client: WebClient,
  url: string,
  signal: AbortSignal,
): Promise<WebResponse> {
  try {
    const response = await client.get(url, signal);
    assertUsableStatus(response.url, response.status);
    return response;
  } catch (error) {
    if (error instanceof RobotsDisallowed) throw new MessageSkipped(error.message);
    throw error;
  }
}

export function assertUsableStatus(url: string, status: number): void {
  if (status === 404 || status === 410) throw new MessageSkipped(`${url} answered ${status}`);
  if (status === 429 || status >= 500) throw new Error(`${url} answered ${status} after the allowed retries`);
  if (status >= 300) throw new Error(`${url} answered ${status}`);
}

/** Headers worth passing on: set-cookie stays behind (it may carry session secrets). */
export function publicHeaders(headers: Record<string, string>): Record<string, string> {
  const { 'set-cookie': _dropped, ...rest } = headers;
  return rest;
}

const textTypes = /^(text\/|application\/(xhtml\+xml|xml|json|ld\+json|rss\+xml|atom\+xml)\b)/i;

/** The page text, or a clear error when the body is not a text document. */
export function pageText(response: WebResponse): { html: string; charset: string } {
  const contentType = response.headers['content-type'];
  if (contentType && !textTypes.test(contentType.trim())) {
    throw new Error(
      `${response.url} is ${contentType.split(';')[0]}, not an HTML page` +
        (/pdf/i.test(contentType) ? ' (route PDFs to pdf_fetcher)' : ''),
    );
  }
  if (looksBinary(response.body)) {
    throw new Error(
      `${response.url} is binary data served as ${contentType ?? 'an untyped body'} (NUL bytes found)`,
    );
  }
  const { text, charset } = decodeBody(response.body, contentType);
  return { html: text, charset };
}
