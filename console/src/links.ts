/**
 * Links the console makes from data (a source's URL, a citation): only http(s) ones. A crawled
 * page or a config can name any URL, and `javascript:` in an href runs as the console, with
 * the API key in its session. No DOM here, so the tests run it in Node.
 */

/** The URL, normalised, when it is absolute http: or https:; undefined for anything else. */
export function httpUrl(value: string | null | undefined): string | undefined {
  if (typeof value !== 'string') return undefined;
  let url: URL;
  try {
    // Parsed the way the browser will parse the href: tabs and newlines inside are dropped,
    // leading spaces trimmed, and the scheme compared case-insensitively.
    url = new URL(value);
  } catch {
    return undefined;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
}
