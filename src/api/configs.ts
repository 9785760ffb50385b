/** Configs group (spec 4.5, without run): store, list, read, update, soft-delete, validate. */
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { AppError } from '../errors.js';
import { type ApiContext, requireConfigs, requireOrchestrator } from './context.js';
import { presentNamedExecutions } from './present.js';
import { errorResponses, pageQuery } from './schemas/common.js';
import type { ConfigCreateRequest, ConfigUpdateRequest, ValidateConfigRequest } from './schemas/configs.js';

const ConfigIdParams = Type.Object({ config_id: Type.String({ format: 'uuid' }) });
const RunQuery = Type.Object({
  skip_init_message: Type.Boolean({
    default: false,
    description: 'start routes without the init message (for replay)',
  }),
  tag: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'unique across executions' })),
});
const RunBody = Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
  description: 'fields merged over the YAML init_message payload',
});

const ListQuery = Type.Object({
  ...pageQuery(),
});

/** Media types whose body is a pipeline config's YAML itself (POST/PUT /configs, validate). */
export const yamlMediaTypes = ['application/yaml', 'application/x-yaml', 'text/yaml'];
const yamlRoute = /^\/api\/v1\/configs(?:\/validate|\/[^/?]+)?(?:\?|$)/;

export async function configRoutes(app: FastifyInstance, context: ApiContext): Promise<void> {
  // A YAML body is the config itself: `{config_yaml: <body>}`, with name and description taken
  // from the YAML. Other routes of the API answer such a body 415, as they would without this.
  app.addContentTypeParser(yamlMediaTypes, { parseAs: 'string' }, (request, body, done) => {
    if (!yamlRoute.test(request.url)) {
      done(new AppError('unsupported_media_type', 'send the body as application/json'), undefined);
      return;
    }
    done(null, { config_yaml: body });
  });
  app.post<{ Body: Static<typeof ConfigCreateRequest> }>(
    '/configs',
    {
      schema: {
        tags: ['configs'],
        summary: 'Store a pipeline config (persisted even with validation errors)',
        body: Type.Ref('ConfigCreateRequest'),
        response: { 201: Type.Ref('PipelineConfigResponse'), ...errorResponses(400, 422, 500, 503) },
      },
    },
    async (request, reply) => {
      const created = await requireConfigs(context).create(request.body);
      return reply.status(201).header('location', `/api/v1/configs/${created.id}`).send(created);
    },
  );

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/configs',
    {
      schema: {
        tags: ['configs'],
        summary: 'List active configs, reports re-derived against the live registry',
        querystring: ListQuery,
        response: { 200: Type.Ref('ConfigListResponse'), ...errorResponses(422, 503) },
      },
    },
    async (request) => {
      const { limit, offset } = request.query;
      const page = await requireConfigs(context).list({ limit, offset });
      return { ...page, limit, offset };
    },
  );

  app.post<{ Body: Static<typeof ValidateConfigRequest> }>(
    '/configs/validate',
    {
      schema: {
        tags: ['configs'],
        summary: 'Validate YAML without storing it (always 200: read is_valid)',
        body: Type.Ref('ValidateConfigRequest'),
        response: { 200: Type.Ref('ValidationReport'), ...errorResponses(422, 503) },
      },
    },
    async (request) => requireConfigs(context).validate(request.body.config_yaml),
  );

  app.get<{ Params: Static<typeof ConfigIdParams> }>(
    '/configs/:config_id',
    {
      schema: {
        tags: ['configs'],
        summary: 'One config with its YAML and a freshly derived report',
        params: ConfigIdParams,
        response: { 200: Type.Ref('ConfigDetailResponse'), ...errorResponses(404, 422, 503) },
      },
    },
    async (request) => requireConfigs(context).get(request.params.config_id),
  );

  app.put<{ Params: Static<typeof ConfigIdParams>; Body: Static<typeof ConfigUpdateRequest> }>(
    '/configs/:config_id',
    {
      schema: {
        tags: ['configs'],
        summary: 'Update name, description or YAML (version + 1, hash recomputed)',
        params: ConfigIdParams,
        body: Type.Ref('ConfigUpdateRequest'),
        response: { 200: Type.Ref('ConfigDetailResponse'), ...errorResponses(400, 404, 422, 503) },
      },
    },
    async (request) => requireConfigs(context).update(request.params.config_id, request.body),
  );

  app.delete<{ Params: Static<typeof ConfigIdParams> }>(
    '/configs/:config_id',
    {
      schema: {
        tags: ['configs'],
        summary: 'Deactivate a config (soft delete)',
        params: ConfigIdParams,
        response: { 204: Type.Null({ description: 'deleted' }), ...errorResponses(404, 422, 503) },
      },
    },
    async (request, reply) => {
      await requireConfigs(context).remove(request.params.config_id);
      return reply.status(204).send();
    },
  );

  app.post<{
    Params: Static<typeof ConfigIdParams>;
    Querystring: Static<typeof RunQuery>;
    Body: Record<string, unknown> | null | undefined;
  }>(
    '/configs/:config_id/run',
    {
      schema: {
        tags: ['configs'],
        summary: 'Run a config: create an execution, start its routes, publish the init message',
        params: ConfigIdParams,
        querystring: RunQuery,
        body: RunBody,
        response: { 201: Type.Ref('ExecutionResponse'), ...errorResponses(400, 404, 422, 500, 503) },
      },
    },
    async (request, reply) => {
      const orchestrator = requireOrchestrator(context);
      const execution = await orchestrator.run(request.params.config_id, {
        skipInitMessage: request.query.skip_init_message,
        tag: request.query.tag,
        payload: request.body,
      });
      return reply
        .status(201)
        .header('location', `/api/v1/executions/${execution.id}`)
        .send((await presentNamedExecutions(context.database?.db, [execution]))[0]);
    },
  );
}
