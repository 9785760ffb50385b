/**
 * One HTTP GET without following redirects: timeout over the whole exchange, a byte cap that
 * aborts the stream as soon as it is crossed (the declared Content-Length is checked first),
 * headers as a plain object of lower-cased names. Only http: and https: URLs are fetched, and
 * only where the egress policy lets them connect (checked at connect time, egress-policy.ts),
 * through the one outbound client (outbound.ts).
 */
import type { Response } from 'undici';
import type { EgressPolicy } from './egress-policy.js';
import { EgressRefused, HttpFetchError, outboundRequest } from './outbound.js';

export { EgressRefused, HttpFetchError };

/** The host answered, with more than the cap allows. */
export class BodyTooLarge extends HttpFetchError {
  override name = 'BodyTooLarge';
  readonly permanent = true;
}

export interface RawResponse {
  url: string;
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export interface FetchOnceOptions {
  userAgent: string;
  timeoutMs: number;
  maxBytes: number;
  accept?: string;
  /** Extra request headers (an API's Authorization, say). */
  headers?: Readonly<Record<string, string>>;
  signal?: AbortSignal;
  egress: EgressPolicy;
}

export async function fetchOnce(url: URL, options: FetchOnceOptions): Promise<RawResponse> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new HttpFetchError(`${url.href}: only http and https URLs are fetched`);
  }
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const fail = (error: unknown): never => {
    if (timeout.aborted)
      throw new HttpFetchError(`${url.href}: no complete answer within ${options.timeoutMs} ms`);
    if (options.signal?.aborted) throw options.signal.reason ?? error;
    if (error instanceof HttpFetchError) throw error;
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new HttpFetchError(`${url.href}: ${cause?.code ?? cause?.message ?? (error as Error).message}`);
  };
  let response: Response;
  try {
    response = await outboundRequest({
      url,
      signal,
      egress: options.egress,
      headers: { ...options.headers, 'user-agent': options.userAgent, accept: options.accept ?? '*/*' },
    });
  } catch (error) {
    return fail(error);
  }
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const declared = Number(headers['content-length']);
  // A declared length only counts when the body is not re-encoded (fetch decompresses it).
  if (!headers['content-encoding'] && declared > options.maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw new BodyTooLarge(tooLarge(url, options.maxBytes, `declares ${declared} bytes`));
  }
  try {
    const body = await readCapped(response, url, options.maxBytes);
    return { url: url.href, status: response.status, headers, body };
  } catch (error) {
    return fail(error);
  }
}

async function readCapped(response: Response, url: URL, maxBytes: number): Promise<Buffer> {
  if (!response.body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new BodyTooLarge(tooLarge(url, maxBytes, `sent more than that`));
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total);
}

function tooLarge(url: URL, maxBytes: number, detail: string): string {
  return `${url.href}: body over the limit of ${maxBytes} bytes (${detail})`;
}
