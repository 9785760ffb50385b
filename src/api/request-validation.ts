/**
 * Request validation with two Ajv instances. Query strings, path parameters and headers arrive
 * as text, so they are coerced ("10" -> 10); JSON bodies are not, so `{"name": 42}` is a 422
 * rather than silently becoming "42" (the strictness Pydantic clients expect of a body).
 */
import { Ajv, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import type { TSchema } from 'typebox';
import { findNulCharacters } from './nul-characters.js';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const sharedOptions: Options = {
  allErrors: true,
  // `verbose` keeps the offending value on each error: the 422 body reports it as `input`.
  verbose: true,
  useDefaults: true,
  removeAdditional: false,
  strict: false,
};

export function installRequestValidation(app: FastifyInstance, namedSchemas: readonly TSchema[]): void {
  const forText = addFormats(new Ajv({ ...sharedOptions, coerceTypes: 'array' }));
  const forBodies = addFormats(new Ajv({ ...sharedOptions, coerceTypes: false }));
  for (const schema of namedSchemas) {
    forText.addSchema(harden(schema));
    forBodies.addSchema(harden(schema));
  }
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const compile = () => {
      const validate = (httpPart === 'body' ? forBodies : forText).compile(harden(schema as TSchema));
      return withoutNulCharacters(httpPart === 'body' ? reportingSentInput(validate) : validate);
    };
    // Compiled on the route's first request, as the response serializers are
    // (lazy-serializers.ts): compiling every route's validators made 0.45 s of a start
    // (docs/benchmarks.md, "Start-up, first queries and idle memory").
    let compiled: ValidateFunction | undefined;
    const validateOnFirstUse = ((data: unknown) => {
      compiled ??= compile();
      const valid = compiled(data) as boolean;
      validateOnFirstUse.errors = compiled.errors;
      return valid;
    }) as ValidateFunction;
    return validateOnFirstUse;
  });
}

const INT32_MAX = 2_147_483_647;
/** NUL findings listed at most, as many as a 422 shows (validation-errors.ts). */
const MAX_NUL_FINDINGS = 20;

/**
 * `validate` that also refuses NUL characters anywhere in the value (nul-characters.ts): the
 * search runs on the value as sent, before Ajv coerces it or fills in defaults, and its
 * findings come first, beside any schema errors.
 */
function withoutNulCharacters(validate: ValidateFunction): ValidateFunction {
  const wrapper = ((data: unknown) => {
    const nul = findNulCharacters(data, MAX_NUL_FINDINGS);
    const valid = validate(data) as boolean;
    const errors = [...nul, ...(valid ? [] : (validate.errors ?? []))];
    wrapper.errors = errors.length > 0 ? errors : null;
    return errors.length === 0;
  }) as ValidateFunction;
  return wrapper;
}

/**
 * A copy of `schema` that refuses what the database cannot take, so it is a 422 and never a
 * 500: every integer without a bound of its own stays within 32 bits
 * (`offset=9223372036854775807`). NUL characters are refused by `withoutNulCharacters`.
 */
function harden<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(harden) as T;
  if (typeof schema !== 'object' || schema === null) return schema;
  const copy: Record<string | symbol, unknown> = {};
  for (const [key, value] of Object.entries(schema)) copy[key] = harden(value);
  if (copy.type === 'integer') {
    if (copy.maximum === undefined && copy.exclusiveMaximum === undefined) copy.maximum = INT32_MAX;
    if (copy.minimum === undefined && copy.exclusiveMinimum === undefined) copy.minimum = -INT32_MAX - 1;
  }
  // TypeBox marks its schemas with symbol keys (Kind), which Object.entries leaves out.
  for (const symbol of Object.getOwnPropertySymbols(schema))
    copy[symbol] = (schema as Record<symbol, unknown>)[symbol];
  return copy as T;
}

/**
 * Ajv fills defaults into the body as it validates, so the values its errors carry would show
 * fields the caller never sent. The 422 body must echo what was sent: errors take their `data`
 * from a copy made before validation.
 */
function reportingSentInput(validate: ValidateFunction): ValidateFunction {
  const wrapper = ((data: unknown) => {
    const sent = typeof data === 'object' && data !== null ? structuredClone(data) : data;
    const valid = validate(data) as boolean;
    wrapper.errors = valid
      ? null
      : (validate.errors ?? []).map((error) => ({ ...error, data: valueAt(sent, error.instancePath) }));
    return valid;
  }) as ValidateFunction;
  return wrapper;
}

/** The value at a JSON pointer (`/a/0/b`), or undefined. */
function valueAt(value: unknown, pointer: string): unknown {
  let current = value;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}
