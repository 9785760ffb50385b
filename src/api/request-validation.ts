/**
 * Request validation with two Ajv instances. Query strings, path parameters and headers arrive
 * as text, so they are coerced ("10" -> 10); JSON bodies are not, so `{"name": 42}` is a 422
 * rather than silently becoming "42" (the strictness Pydantic clients expect of a body).
 */
import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import type { TSchema } from 'typebox';

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
    forText.addSchema(schema);
    forBodies.addSchema(schema);
  }
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? forBodies : forText).compile(schema as object),
  );
}
