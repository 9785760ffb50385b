/**
 * PostgreSQL cannot store a NUL character (U+0000) in text or jsonb, neither in a string nor in
 * an object key, so a request holding one would reach the database only to fail there (a 500).
 * Every part of every request (body, query, path, headers) is searched for it before schema
 * validation, free-form objects (a run body, template settings) included, which a check on the
 * schema's typed strings alone would miss.
 */
import type { ErrorObject } from 'ajv';

/** The keyword the findings carry, in Ajv's error shape; validation-errors.ts answers `string_nul`. */
export const NUL_KEYWORD = 'x-no-nul';

/** Each string or object key holding a NUL, in document order, at most `limit` of them. */
export function findNulCharacters(value: unknown, limit: number): ErrorObject[] {
  const found: ErrorObject[] = [];
  // An explicit stack: the walk must not depend on how deep the value is nested.
  const pending: Array<{ value: unknown; pointer: string }> = [{ value, pointer: '' }];
  while (pending.length > 0 && found.length < limit) {
    const next = pending.pop() as { value: unknown; pointer: string };
    if (typeof next.value === 'string') {
      if (next.value.includes('\u0000')) found.push(finding(next.pointer, next.value));
      continue;
    }
    if (typeof next.value !== 'object' || next.value === null) continue;
    const children: Array<{ value: unknown; pointer: string }> = [];
    for (const [key, item] of Object.entries(next.value)) {
      const pointer = `${next.pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      // A key is reported where it stands, with the key itself as the input.
      if (key.includes('\u0000')) children.push({ value: key, pointer });
      else children.push({ value: item, pointer });
    }
    // Reversed onto the stack, so they come off it in document order.
    for (const child of children.reverse()) pending.push(child);
  }
  return found;
}

function finding(pointer: string, text: string): ErrorObject {
  return {
    keyword: NUL_KEYWORD,
    instancePath: pointer,
    schemaPath: `#/${NUL_KEYWORD}`,
    params: {},
    message: 'must not contain NUL characters',
    data: text,
  };
}
