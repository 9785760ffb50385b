/**
 * Architecture check (issue 30): every string a request can carry has a maxLength, and every
 * `offset` and `limit` parameter has both bounds, so the next schema cannot forget them. It
 * walks the served OpenAPI document: request bodies (through their `$ref`s) and parameters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuiltinRegistry } from '../src/adapters/builtin.js';
import { buildApp } from '../src/app.js';
import { loadSettings } from '../src/settings.js';

// biome-ignore lint/suspicious/noExplicitAny: the document is walked as untyped JSON
type Json = any;

/**
 * Strings bounded otherwise, each with the reason: the body limit (WEIR_BODY_LIMIT) bounds a
 * config's YAML, which has its own limit too (MAX_CONFIG_BYTES), and the questions of a chat.
 */
const exempt: Record<string, string> = {
  'ConfigCreateRequest.config_yaml': 'the body limit and MAX_CONFIG_BYTES',
  'ConfigUpdateRequest.config_yaml': 'the body limit and MAX_CONFIG_BYTES',
  'ConfigValidateRequest.config_yaml': 'the body limit and MAX_CONFIG_BYTES',
  // A string over a maxLength is a 422 that echoes an excerpt of it: not for a password.
  'MQDiagnosticRequest.password': 'the body limit (a 422 would echo it)',
  // The same schema inlined as the request body (issue 33: its defaulted fields optional).
  'POST /api/v1/system/mq-diagnostic body.password': 'the body limit (a 422 would echo it)',
};

/** Strings whose length a format or a closed list already bounds. */
function boundedByShape(schema: Json): boolean {
  return (
    schema.enum !== undefined ||
    schema.const !== undefined ||
    ['uuid', 'date-time', 'date'].includes(schema.format) ||
    (typeof schema.pattern === 'string' && /\{\d+,\d+\}\$$|^\^\[[^\]]*\]\{\d+\}\$$/.test(schema.pattern))
  );
}

/** Each unbounded string under `schema`, named `<where>.<path>`. */
function unboundedStrings(document: Json, schema: Json, where: string, seen: Set<string>): string[] {
  if (typeof schema !== 'object' || schema === null) return [];
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.split('/').at(-1) as string;
    if (seen.has(name)) return [];
    return unboundedStrings(document, document.components.schemas[name], name, new Set([...seen, name]));
  }
  const found: string[] = [];
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('string') && schema.maxLength === undefined && !boundedByShape(schema)) {
    if (!exempt[where]) found.push(where);
  }
  for (const [key, value] of Object.entries(schema.properties ?? {})) {
    found.push(...unboundedStrings(document, value, `${where}.${key}`, seen));
  }
  for (const key of ['items', 'additionalProperties', 'not']) {
    if (typeof schema[key] === 'object')
      found.push(...unboundedStrings(document, schema[key], `${where}[]`, seen));
  }
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    for (const member of schema[key] ?? []) found.push(...unboundedStrings(document, member, where, seen));
  }
  return found;
}

describe('request bounds in the OpenAPI document (issue 30)', () => {
  let app: Awaited<ReturnType<typeof buildApp>>;
  let document: Json;
  beforeAll(async () => {
    app = await buildApp({ settings: loadSettings({}), registry: createBuiltinRegistry() });
    document = (await app.inject({ url: '/openapi.json' })).json();
  });
  afterAll(async () => {
    await app.close();
  });

  function operations(): Array<{ name: string; operation: Json }> {
    return Object.entries(document.paths as Record<string, Json>).flatMap(([path, methods]) =>
      Object.entries(methods as Record<string, Json>).map(([method, operation]) => ({
        name: `${method.toUpperCase()} ${path}`,
        operation,
      })),
    );
  }

  it('gives every string of a request body and every string parameter a maxLength', () => {
    const unbounded: string[] = [];
    for (const { name, operation } of operations()) {
      for (const parameter of operation.parameters ?? []) {
        unbounded.push(
          ...unboundedStrings(
            document,
            parameter.schema,
            `${name} ${parameter.in}.${parameter.name}`,
            new Set(),
          ),
        );
      }
      const body = operation.requestBody?.content?.['application/json']?.schema;
      if (body) unbounded.push(...unboundedStrings(document, body, `${name} body`, new Set()));
    }
    expect([...new Set(unbounded)]).toEqual([]);
  });

  it('bounds every offset and limit parameter on both sides', () => {
    const unbounded: string[] = [];
    let seen = 0;
    for (const { name, operation } of operations()) {
      for (const parameter of operation.parameters ?? []) {
        if (!['offset', 'limit'].includes(parameter.name)) continue;
        seen++;
        const schema = parameter.schema ?? {};
        if (schema.type !== 'integer' || schema.minimum === undefined || schema.maximum === undefined) {
          unbounded.push(`${name} ${parameter.name}: ${JSON.stringify(schema)}`);
        }
      }
    }
    expect(seen).toBeGreaterThan(5);
    expect(unbounded).toEqual([]);
  });
});
