/**
 * Dotted payload field paths as the redaction adapters write them: `markdown`, `segment.text`,
 * `segments[].text` (`[]` walks every item of an array). Missing fields are ignored.
 */

/** A plain dotted path without `[]` (for fields read as one value). */
export const dottedPathPattern = '^[A-Za-z0-9_]+(\\.[A-Za-z0-9_]+)*$';

/** Pattern a field path must match (for config schemas). */
export const fieldPathPattern = '^[A-Za-z0-9_]+(\\[\\])?(\\.[A-Za-z0-9_]+(\\[\\])?)*$';

/**
 * Replaces every string at `path` inside `value` (mutates it) with `change(text)`; returns how
 * many strings it changed.
 */
export function rewriteStrings(value: unknown, path: string, change: (text: string) => string): number {
  return rewrite(value, path.split('.'), change);
}

function rewrite(value: unknown, path: readonly string[], change: (text: string) => string): number {
  const [head, ...rest] = path;
  if (head === undefined || value === null || typeof value !== 'object') return 0;
  const isArray = head.endsWith('[]');
  const key = isArray ? head.slice(0, -2) : head;
  const container = value as Record<string, unknown>;
  const child = container[key];
  if (isArray) {
    if (!Array.isArray(child)) return 0;
    let changed = 0;
    child.forEach((item, index) => {
      if (rest.length > 0) changed += rewrite(item, rest, change);
      else if (typeof item === 'string') {
        child[index] = change(item);
        changed++;
      }
    });
    return changed;
  }
  if (rest.length > 0) return rewrite(child, rest, change);
  if (typeof child !== 'string') return 0;
  container[key] = change(child);
  return 1;
}
