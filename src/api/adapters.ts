/** Adapters group (spec 4.2): the live registry, each adapter's config schema, config checks. */
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import type { AdapterDefinition } from '../adapters/adapter.js';
import { AppError } from '../errors.js';
import { type ApiContext, requireRegistry } from './context.js';
import type { ConfigValidationRequest } from './schemas/adapters.js';
import { errorResponses } from './schemas/common.js';

const AdapterTypeParams = Type.Object({
  adapter_type: Type.String({ minLength: 1, maxLength: 100, description: 'registered adapter type' }),
});

export async function adapterRoutes(app: FastifyInstance, context: ApiContext): Promise<void> {
  function findAdapter(type: string): AdapterDefinition {
    const definition = requireRegistry(context).get(type);
    if (!definition)
      throw new AppError('adapter_not_found', `adapter type ${JSON.stringify(type)} is not registered`);
    return definition;
  }

  app.get(
    '/adapters',
    {
      schema: {
        tags: ['adapters'],
        summary: 'List registered adapter types',
        response: { 200: Type.Ref('AdapterListResponse'), ...errorResponses(503) },
      },
    },
    async () => {
      const adapters = requireRegistry(context)
        .list()
        .map((definition) => definition.type);
      return { adapters, total: adapters.length };
    },
  );

  app.get<{ Params: Static<typeof AdapterTypeParams> }>(
    '/adapters/:adapter_type',
    {
      schema: {
        tags: ['adapters'],
        summary: 'Config JSON Schema and metadata of one adapter type',
        params: AdapterTypeParams,
        response: { 200: Type.Ref('AdapterInfoResponse'), ...errorResponses(404, 422, 503) },
      },
    },
    async (request) => {
      const definition = findAdapter(request.params.adapter_type);
      return {
        type: definition.type,
        group: definition.group,
        summary: definition.summary,
        description: definition.description ?? null,
        fan_out: definition.fanOut === true,
        terminal: definition.terminal === true,
        config_schema: definition.config,
        input_schema: definition.input,
        output_schema: definition.output,
      };
    },
  );

  app.post<{ Params: Static<typeof AdapterTypeParams>; Body: Static<typeof ConfigValidationRequest> }>(
    '/adapters/:adapter_type/validate',
    {
      schema: {
        tags: ['adapters'],
        summary: 'Validate an adapter config without creating an instance',
        params: AdapterTypeParams,
        body: Type.Ref('ConfigValidationRequest'),
        response: { 200: Type.Ref('ConfigValidationResponse'), ...errorResponses(404, 422, 503) },
      },
    },
    async (request) => {
      const definition = findAdapter(request.params.adapter_type);
      const check = requireRegistry(context).checkConfig(definition, request.body.config);
      return {
        adapter_type: definition.type,
        is_valid: check.valid,
        errors: check.errors,
        normalized_config: check.config,
      };
    },
  );
}
