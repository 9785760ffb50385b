/**
 * Request-schema failures as the 422 body of spec part 7: `detail` is a list of
 * `{loc, msg, type, input, ctx}` entries, the FastAPI/Pydantic shape, so clients written for
 * that shape parse ours. `loc` starts with `body`, `query`, `path` or `header`.
 */
import { excerptText } from '../excerpt.js';
import { foldLiteralUnions } from './literal-unions.js';
import { NUL_KEYWORD } from './nul-characters.js';

export interface ValidationErrorEntry {
  loc: (string | number)[];
  msg: string;
  type: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

/** The parts of an Ajv error (with `verbose: true`) that the mapping reads. */
export interface SchemaError {
  keyword: string;
  instancePath: string;
  /** Where in the schema: ties the errors of a union's members to the union's own error. */
  schemaPath?: string;
  params: Record<string, unknown>;
  message?: string | undefined;
  data?: unknown;
}

const locationNames: Record<string, string> = {
  body: 'body',
  querystring: 'query',
  params: 'path',
  headers: 'header',
};

/** Entries a 422 lists at most; the first ones are enough to fix a request. */
const MAX_ENTRIES = 20;
/** Characters of a string `input` echoed; items and keys of an array or object. */
const EXCERPT_CHARACTERS = 200;
const EXCERPT_ITEMS = 10;

export function toValidationErrors(errors: readonly SchemaError[], context: string): ValidationErrorEntry[] {
  const root = locationNames[context] ?? context;
  const entries: ValidationErrorEntry[] = [];
  const seen = new Set<string>();
  for (const error of foldLiteralUnions(errors)) {
    const entry = toEntry(error, root);
    if (!entry) continue;
    const key = JSON.stringify([entry.loc, entry.type]);
    if (seen.has(key)) continue;
    seen.add(key);
    // A 9 MB string must not come back as a 9 MB error: `input` is an excerpt.
    if ('input' in entry) entry.input = excerpt(entry.input, 2);
    entries.push(entry);
  }
  return withoutUnionNoise(entries).slice(0, MAX_ENTRIES);
}

/** What a union reports besides its members' own errors. */
const UNION_NOISE = new Set(['none_required', 'union_tag_invalid']);

/**
 * A value that fails a member of a union (a nullable string holding a NUL) also fails the
 * other members ("should be None") and the union itself; where a member's own error names the
 * problem, those two say nothing more and are left out.
 */
function withoutUnionNoise(entries: ValidationErrorEntry[]): ValidationErrorEntry[] {
  const specific = new Set(
    entries.filter((entry) => !UNION_NOISE.has(entry.type)).map((entry) => JSON.stringify(entry.loc)),
  );
  return entries.filter((entry) => !UNION_NOISE.has(entry.type) || !specific.has(JSON.stringify(entry.loc)));
}

/** `value` cut to a bounded size: long strings, long lists, big and deep objects shortened. */
export function excerpt(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return excerptText(value, EXCERPT_CHARACTERS);
  if (typeof value !== 'object' || value === null) return value;
  if (depth === 0) return Array.isArray(value) ? `[… ${value.length} items]` : '{…}';
  if (Array.isArray(value)) {
    const items = value.slice(0, EXCERPT_ITEMS).map((item) => excerpt(item, depth - 1));
    return value.length > EXCERPT_ITEMS ? [...items, `… ${value.length - EXCERPT_ITEMS} more items`] : items;
  }
  const entries = Object.entries(value);
  const kept = entries
    .slice(0, EXCERPT_ITEMS)
    .map(([key, item]) => [excerpt(key, 0) as string, excerpt(item, depth - 1)]);
  if (entries.length > EXCERPT_ITEMS) kept.push(['…', `${entries.length - EXCERPT_ITEMS} more fields`]);
  return Object.fromEntries(kept);
}

function toEntry(error: SchemaError, root: string): ValidationErrorEntry | undefined {
  const loc: (string | number)[] = [root, ...pointerSegments(error.instancePath)];
  const input = error.data;
  const params = error.params;
  switch (error.keyword) {
    case NUL_KEYWORD:
      return { loc, msg: 'String should not contain NUL characters', type: 'string_nul', input };
    case 'required':
      return { loc: [...loc, String(params.missingProperty)], msg: 'Field required', type: 'missing', input };
    case 'additionalProperties':
      return {
        loc: [...loc, String(params.additionalProperty)],
        msg: 'Extra inputs are not permitted',
        type: 'extra_forbidden',
        input: (input as Record<string, unknown> | undefined)?.[String(params.additionalProperty)],
      };
    case 'type':
      if ((input === undefined || input === null) && loc.length === 1 && root === 'body') {
        return { loc, msg: 'Field required', type: 'missing', input: null };
      }
      return { loc, ...describeType(String(params.type), input), input };
    case 'minimum':
      return bound(loc, input, 'greater_than_equal', 'greater than or equal to', 'ge', params.limit);
    case 'maximum':
      return bound(loc, input, 'less_than_equal', 'less than or equal to', 'le', params.limit);
    case 'exclusiveMinimum':
      return bound(loc, input, 'greater_than', 'greater than', 'gt', params.limit);
    case 'exclusiveMaximum':
      return bound(loc, input, 'less_than', 'less than', 'lt', params.limit);
    case 'minLength':
      return {
        loc,
        msg: `String should have at least ${String(params.limit)} character${params.limit === 1 ? '' : 's'}`,
        type: 'string_too_short',
        input,
        ctx: { min_length: params.limit },
      };
    case 'maxLength':
      return {
        loc,
        msg: `String should have at most ${String(params.limit)} characters`,
        type: 'string_too_long',
        input,
        ctx: { max_length: params.limit },
      };
    case 'minItems':
      return {
        loc,
        msg: `List should have at least ${String(params.limit)} item${params.limit === 1 ? '' : 's'}`,
        type: 'too_short',
        input,
        ctx: { field_type: 'List', min_length: params.limit, actual_length: arrayLength(input) },
      };
    case 'maxItems':
      return {
        loc,
        msg: `List should have at most ${String(params.limit)} items`,
        type: 'too_long',
        input,
        ctx: { field_type: 'List', max_length: params.limit, actual_length: arrayLength(input) },
      };
    case 'minProperties':
      return {
        loc,
        msg: `Provide at least ${String(params.limit)} field${params.limit === 1 ? '' : 's'}`,
        type: 'too_short',
        input,
        ctx: { field_type: 'Object', min_length: params.limit },
      };
    case 'pattern':
      return {
        loc,
        msg: `String should match pattern '${String(params.pattern)}'`,
        type: 'string_pattern_mismatch',
        input,
        ctx: { pattern: params.pattern },
      };
    case 'format':
      if (params.format === 'uuid') {
        return { loc, msg: 'Input should be a valid UUID', type: 'uuid_parsing', input };
      }
      return {
        loc,
        msg: `Input should be a valid ${String(params.format)}`,
        type: 'value_error',
        input,
        ctx: { format: params.format },
      };
    case 'enum':
      return {
        loc,
        msg: `Input should be ${formatChoices(params.allowedValues)}`,
        type: 'enum',
        input,
        ctx: { expected: formatChoices(params.allowedValues) },
      };
    case 'const': {
      // A union of literals arrives folded with every allowed value (literal-unions.ts).
      const expected = Array.isArray(params.allowedValues)
        ? formatChoices(params.allowedValues)
        : JSON.stringify(params.allowedValue);
      return { loc, msg: `Input should be ${expected}`, type: 'literal_error', input, ctx: { expected } };
    }
    case 'anyOf':
    case 'oneOf':
      return { loc, msg: 'Input does not match any allowed shape', type: 'union_tag_invalid', input };
    case 'if':
    case 'then':
    case 'else':
      return undefined; // the branch's own error carries the detail
    default:
      return { loc, msg: error.message ?? 'Invalid value', type: 'value_error', input };
  }
}

function describeType(expected: string, input: unknown): { msg: string; type: string } {
  const fromText = typeof input === 'string';
  switch (expected.split(',')[0]) {
    case 'integer':
      return fromText
        ? {
            msg: 'Input should be a valid integer, unable to parse string as an integer',
            type: 'int_parsing',
          }
        : { msg: 'Input should be a valid integer', type: 'int_type' };
    case 'number':
      return fromText
        ? { msg: 'Input should be a valid number, unable to parse string as a number', type: 'float_parsing' }
        : { msg: 'Input should be a valid number', type: 'float_type' };
    case 'boolean':
      return fromText
        ? { msg: 'Input should be a valid boolean, unable to interpret input', type: 'bool_parsing' }
        : { msg: 'Input should be a valid boolean', type: 'bool_type' };
    case 'string':
      return { msg: 'Input should be a valid string', type: 'string_type' };
    case 'array':
      return { msg: 'Input should be a valid list', type: 'list_type' };
    case 'object':
      return { msg: 'Input should be a valid dictionary or object', type: 'dict_type' };
    case 'null':
      return { msg: 'Input should be None', type: 'none_required' };
    default:
      return { msg: `Input should be of type ${expected}`, type: 'type_error' };
  }
}

function bound(
  loc: (string | number)[],
  input: unknown,
  type: string,
  words: string,
  key: string,
  limit: unknown,
): ValidationErrorEntry {
  return { loc, msg: `Input should be ${words} ${String(limit)}`, type, input, ctx: { [key]: limit } };
}

function pointerSegments(pointer: string): (string | number)[] {
  if (!pointer) return [];
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'))
    .map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment));
}

function arrayLength(input: unknown): number | null {
  return Array.isArray(input) ? input.length : null;
}

function formatChoices(values: unknown): string {
  const list = Array.isArray(values) ? values.map((value) => `'${String(value)}'`) : [];
  if (list.length <= 1) return list.join('');
  return `${list.slice(0, -1).join(', ')} or ${list.at(-1)}`;
}
