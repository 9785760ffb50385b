/**
 * Headers that keep a browser from running anything the service answers with as a page of the
 * API's own origin (issue 30): a crawled page stored as `.html` and opened from the storage
 * API ran its script beside the API and read `/system/config`.
 *
 * - Every answer says `nosniff` (no guessing HTML out of a text or JSON body), may not be framed
 *   (`frame-ancestors 'none'`, `X-Frame-Options: DENY` for browsers without CSP 2) and carries
 *   a Content-Security-Policy: the console's, the API docs' or, for everything else (JSON,
 *   stored objects, errors), one that allows nothing.
 * - Stored objects of an active type (HTML, SVG, XML, script, anything not known to be passive)
 *   are attachments, and every stored object is also under `sandbox`, so even one opened
 *   inline is a page of a unique opaque origin that can run nothing.
 */
import type { ServerResponse } from 'node:http';

/** The web console (`/`, `/console/...`): its own script and style files only, no inline script. */
export const CONSOLE_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  // data: for the empty favicon; stored HTML previewed in a frame may not load images from anywhere else.
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The console's page itself (`/`): as CONSOLE_POLICY, and style elements carrying this
 * response's nonce. The config editor (CodeMirror) writes its styles into a style element it
 * creates, which `style-src 'self'` alone would block; the nonce lets those in, and nothing
 * else inline.
 */
export function consolePagePolicy(styleNonce: string): string {
  return CONSOLE_POLICY.replace("style-src 'self'", `style-src 'self' 'nonce-${styleNonce}'`);
}

/**
 * Swagger UI at /docs: its bundle is files (no inline script), but React and its syntax
 * highlighter style elements inline, so styles may be inline; nothing leaves the origin.
 */
export const DOCS_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self' data:",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Everything else: JSON, event streams, errors and stored objects never need to load anything. */
export const API_POLICY = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Stored objects: the above, and a sandbox (a unique origin, no script, no forms, no popups). */
export const STORED_OBJECT_POLICY = `sandbox; ${API_POLICY}`;

export function contentSecurityPolicyFor(path: string): string {
  if (path === '/' || path === '/index.html' || path.startsWith('/console/')) return CONSOLE_POLICY;
  if (path === '/docs' || path.startsWith('/docs/')) return DOCS_POLICY;
  return API_POLICY;
}

/**
 * Sets the headers every answer carries on the raw response, before any route runs: Node
 * merges them into whatever the answer writes later, so event streams that write their own
 * head (`reply.hijack()`), 404s, errors and static files all carry them too.
 */
export function setSecurityHeaders(response: ServerResponse, url: string): void {
  const path = url.split('?')[0] ?? '';
  response.setHeader('x-content-type-options', 'nosniff');
  response.setHeader('x-frame-options', 'DENY');
  response.setHeader('content-security-policy', contentSecurityPolicyFor(path));
  // Object keys and execution ids in URLs are nobody else's business.
  response.setHeader('referrer-policy', 'no-referrer');
  // No other site may load an answer into its page (an <img>, a <script>) and so into its process.
  response.setHeader('cross-origin-resource-policy', 'same-origin');
}

/**
 * Media types a browser only ever displays: no script, no markup that could load any.
 * Everything else (HTML, XHTML, SVG, XML, JavaScript, PDF, unknown or missing types) is active.
 * PDF is active: viewers run its JavaScript and forms.
 */
const PASSIVE_TYPES = new Set([
  'text/plain',
  'text/markdown',
  'text/csv',
  'application/json',
  'application/x-ndjson',
  'application/octet-stream',
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
]);

/** The media type of a Content-Type value, lower-cased, without parameters. */
export function mediaTypeOf(contentType: string | null | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

export function isPassiveType(contentType: string | null | undefined): boolean {
  return PASSIVE_TYPES.has(mediaTypeOf(contentType));
}

/**
 * The headers a stored object is answered with besides its type: always the sandbox policy,
 * and for an active type `Content-Disposition: attachment` (the browser saves it, never shows
 * it), named after the last segment of its key.
 */
export function storedObjectHeaders(
  key: string,
  contentType: string | null | undefined,
): Record<string, string> {
  const headers: Record<string, string> = { 'content-security-policy': STORED_OBJECT_POLICY };
  if (!isPassiveType(contentType))
    headers['content-disposition'] = attachment(key.split('/').pop() ?? 'object');
  return headers;
}

/** `attachment` with an ASCII fallback name and the exact one in RFC 5987 form. */
function attachment(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const encoded = encodeURIComponent(name).replace(
    /['()*]/g,
    (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
