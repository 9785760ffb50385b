/**
 * What a client must send, as the server really requires it. @fastify/swagger derives
 * `required` from the route schemas in two ways that overstate it, and a client generated from
 * the document then refuses calls the server accepts:
 * - a query parameter with a default is in its schema's `required` list (Ajv's `useDefaults`
 *   fills it in before `required` is checked), so it came out required;
 * - every request body came out required, but Fastify validates a missing body as `null`, so a
 *   body whose schema accepts null (the run body, spec 4.5) may be left out.
 */

interface Parameter {
  in?: string;
  required?: boolean;
  schema?: { default?: unknown };
}

interface JsonSchema {
  type?: string | string[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
}

interface Operation {
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
}

export interface OpenApiDocument {
  paths?: Record<string, Record<string, Operation>>;
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
      if (body && media.length > 0 && media.every((entry) => acceptsNull(entry.schema))) {
        body.required = false;
      }
    }
  }
  return document;
}
