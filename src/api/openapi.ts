/**
 * OpenAPI 3.1 from the route schemas. Named schemas (the records of spec 2.9) are registered
 * with their `$id` and appear under components.schemas by that name. The document is served
 * at /openapi.json and the interactive docs, from files inside the package, at /docs.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { TSchema } from 'typebox';
import { SERVICE_VERSION } from '../version.js';
import { type OpenApiDocument, relaxRequirements } from './openapi-requirements.js';

export const API_VERSION = '0.5.1';

export const tags = [
  { name: 'system', description: 'health, metrics, configuration, reload, version, broker diagnostic' },
  { name: 'adapters', description: 'adapter registry: types, config schemas, config validation' },
  { name: 'chat', description: 'search (keyword, vector, RRF), RAG chat, templates' },
  { name: 'configs', description: 'pipeline configs: store, validate, run' },
  { name: 'pipelines', description: 'route control across executions' },
  { name: 'replay', description: 'replay stored outputs into a route' },
  { name: 'storage', description: 'stage outputs and their sidecars; storage event stream' },
  { name: 'webhooks', description: 'signed event deliveries with retries' },
  { name: 'executions', description: 'executions, their lineage and the wait operation' },
];

export async function installOpenApi(app: FastifyInstance, namedSchemas: readonly TSchema[]): Promise<void> {
  for (const schema of namedSchemas) app.addSchema(schema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Weir',
        version: SERVICE_VERSION,
        description: `Content pipelines, knowledge indexing, chat and webhooks. Implements interface ${API_VERSION}.`,
      },
      tags,
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transformObject: (documents) =>
      'openapiObject' in documents
        ? relaxRequirements(documents.openapiObject as OpenApiDocument)
        : documents.swaggerObject,
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, index) =>
        (json.$id as string | undefined) ?? `schema-${index}`,
    },
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // No calls to an online validator: the service works offline.
    uiConfig: { validatorUrl: null },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
