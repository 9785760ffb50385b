/** Paths, type names and suggestions as validation findings word them. */
/** A step in a path into the config document (a key or a list index). */
export type PathSegment = string | number;

export function pointerToPath(pointer: string): PathSegment[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'))
    .map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment));
}

export function formatPath(path: readonly PathSegment[]): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(segment)) text += text ? `.${segment}` : segment;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text;
}

export function readPath(value: unknown, path: readonly PathSegment[]): unknown {
  let current = value;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[segment];
  }
  return current;
}

export function isRouteLevel(path: readonly PathSegment[]): boolean {
  return path.length === 2 && path[0] === 'routes' && typeof path[1] === 'number';
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function describeType(value: unknown): string {
  if (value === null || value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `${article(typeof value)} (${JSON.stringify(value).slice(0, 40)})`;
}

export function article(type: string): string {
  const names: Record<string, string> = {
    object: 'a mapping',
    array: 'a list',
    string: 'a string',
    integer: 'an integer',
    number: 'a number',
    boolean: 'a boolean',
  };
  return names[type] ?? type;
}

export function describeAllowed(keyword: string, params: Record<string, unknown>): string | undefined {
  if (keyword === 'pattern') {
    return 'Use lower-case letters, digits, "_" and "-", starting with a letter or digit, at most 64 characters.';
  }
  if (
    keyword === 'minimum' ||
    keyword === 'maximum' ||
    keyword === 'exclusiveMinimum' ||
    keyword === 'exclusiveMaximum'
  ) {
    return `Use a value ${String(params.comparison)} ${String(params.limit)}.`;
  }
  if (keyword === 'minLength') return 'Use a non-empty value.';
  if (keyword === 'maxLength') return `Shorten it to at most ${String(params.limit)} characters.`;
  return undefined;
}

/** "Did you mean" for a misspelt name: the closest candidate within a small edit distance. */
export function suggestion(value: string, candidates: readonly string[], what: string): string | undefined {
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of [...candidates].sort()) {
    const distance = editDistance(value, candidate);
    if (!best || distance < best.distance) best = { candidate, distance };
  }
  if (!best || best.distance > Math.max(2, Math.floor(value.length / 3))) return undefined;
  return `Did you mean ${what} "${best.candidate}"?`;
}

export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      );
    }
    previous = current;
  }
  return previous[b.length] as number;
}
