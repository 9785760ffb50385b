/**
 * What a client must send, as the server really requires it. @fastify/swagger derives
 * `required` from the route schemas in two ways that overstate it, and a client generated from
 * the document then refuses calls the server accepts:
 * - a query parameter with a default is in its schema's `required` list (Ajv's `useDefaults`
 *   fills it in before `required` is checked), so it came out required;
 * - every request body came out required, but Fastify validates a missing body as `null`, so a
 *   body whose schema accepts null (the run body, spec 4.5) may be left out;
 * - a request body's property with a default (search `limit`, `match`, `expand`, `translate`,
 *   RRF `k`, chat `history`, the broker diagnostic's `port`, `tls`, `timeout_ms`) is in its
 *   object's `required` list for the same reason, so a generated client demanded it.
 */

interface Parameter {
  in?: string;
  required?: boolean;
  schema?: { default?: unknown };
}

interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  default?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema | JsonSchema[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
}

interface Operation {
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema | undefined }> };
}

export interface OpenApiDocument {
  paths?: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

function acceptsNull(schema: JsonSchema | undefined): boolean {
  if (!schema) return false;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('null')) return true;
  return [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].some(acceptsNull);
}

export function relaxRequirements<Document extends OpenApiDocument>(document: Document): Document {
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in === 'query' && parameter.schema?.default !== undefined) parameter.required = false;
      }
      const body = operation.requestBody;
      const media = Object.values(body?.content ?? {});
      for (const entry of media) entry.schema = relaxedBody(entry.schema, document.components?.schemas ?? {});
      if (body && media.length > 0 && media.every((entry) => acceptsNull(entry.schema))) {
        body.required = false;
      }
    }
  }
  return document;
}

/**
 * A request body's schema with its defaulted properties optional. A body naming a schema of
 * components.schemas with such properties gets a copy of it inline: generators read a
 * defaulted property of a *named* schema as always present (openapi-typescript's
 * `defaultNonNullable`, right for responses), and only a body's own schema as what the
 * caller may leave out. The named schema stays, relaxed as well, for other generators.
 */
function relaxedBody(
  schema: JsonSchema | undefined,
  named: Record<string, JsonSchema>,
): JsonSchema | undefined {
  const name = schema?.$ref ? /^#\/components\/schemas\/(.+)$/.exec(schema.$ref)?.[1] : undefined;
  const target = name ? named[decodeURIComponent(name)] : undefined;
  relaxDefaulted(schema, named, new Set());
  if (!target || !Object.values(target.properties ?? {}).some((property) => property.default !== undefined))
    return schema;
  const { $id: _id, ...copy } = structuredClone(target) as JsonSchema & { $id?: string };
  return copy;
}

/**
 * Takes each property that has a default out of its object's `required`, through `$ref`s to
 * named schemas, nested objects and arrays: the server fills it in when it is left out.
 * Only request bodies get here; a response always has its defaulted fields.
 */
function relaxDefaulted(
  schema: JsonSchema | undefined,
  named: Record<string, JsonSchema>,
  seen: Set<JsonSchema>,
): void {
  if (!schema || seen.has(schema)) return;
  seen.add(schema);
  if (schema.$ref) {
    const name = /^#\/components\/schemas\/(.+)$/.exec(schema.$ref)?.[1];
    relaxDefaulted(name ? named[decodeURIComponent(name)] : undefined, named, seen);
  }
  const properties = schema.properties ?? {};
  if (schema.required) {
    schema.required = schema.required.filter((name) => properties[name]?.default === undefined);
    if (schema.required.length === 0) delete schema.required;
  }
  for (const property of Object.values(properties)) relaxDefaulted(property, named, seen);
  const items = Array.isArray(schema.items) ? schema.items : schema.items ? [schema.items] : [];
  for (const nested of [...items, ...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])])
    relaxDefaulted(nested, named, seen);
}
