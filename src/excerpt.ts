/**
 * Text cut to a bounded length for an answer or a log: what a client sent (a 9 MB field, a long
 * path) must not come back whole in an error. One format everywhere: the first `limit`
 * characters, then `… (N more characters)`.
 */
export function excerptText(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit)}… (${text.length - limit} more characters)` : text;
}
