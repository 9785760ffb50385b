/**
 * Chat templates (spec 4.4, 2.8): create (id optional, generated), list with owner,
 * visibility and any-tag filters, read, replace (body id must equal the path id), delete.
 * `rag` and `llm` are checked against the settings chat understands: 400 when invalid.
 */

import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { templateSettingsProblems } from '../chat/chat-service.js';
import { createTemplatesRepository, type TemplatesRepository } from '../db/templates-repository.js';
import { AppError } from '../errors.js';
import type { ApiContext } from './context.js';
import type { ChatTemplateInput } from './schemas/chat.js';
import { errorResponses, pageQuery } from './schemas/common.js';

const TemplateIdParams = Type.Object({ template_id: Type.String({ format: 'uuid' }) });
const ListQuery = Type.Object({
  owner_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  include_public: Type.Boolean({ default: true }),
  tags: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
      maxItems: 50,
      description: 'any tag matches',
    }),
  ),
  ...pageQuery({ defaultLimit: 50, maxLimit: 100 }),
});

type TemplateInput = Static<typeof ChatTemplateInput>;

export async function templateRoutes(app: FastifyInstance, context: ApiContext): Promise<void> {
  const repository = context.database ? createTemplatesRepository(context.database.db) : undefined;
  const requireRepository = (): TemplatesRepository => {
    if (!repository) throw new AppError('database_unavailable', 'the template store is not available');
    return repository;
  };
  const checked = (input: TemplateInput) => {
    const problems = templateSettingsProblems(input);
    if (problems.length > 0) {
      throw new AppError('template_invalid', `invalid template settings: ${problems.join('; ')}`, {
        body: { errors: problems },
      });
    }
    return input;
  };

  app.post<{ Body: TemplateInput }>(
    '/chat/templates',
    {
      schema: {
        tags: ['chat'],
        summary: 'Create a chat template (id generated when absent)',
        body: Type.Ref('ChatTemplateInput'),
        response: { 201: Type.Ref('ChatTemplate'), ...errorResponses(400, 422, 500, 503) },
      },
    },
    async (request, reply) => {
      const { id: requestedId, ...fields } = checked(request.body);
      const id = requestedId ?? randomUUID();
      const created = await requireRepository().create(id, fields, context.now());
      if (!created) throw new AppError('template_invalid', `a template with id ${id} already exists`);
      return reply.status(201).header('location', `/api/v1/chat/templates/${id}`).send(created);
    },
  );

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/chat/templates',
    {
      schema: {
        tags: ['chat'],
        summary: 'List templates: an owner’s plus public ones, filtered by any of the tags',
        querystring: ListQuery,
        response: { 200: Type.Ref('TemplateListResponse'), ...errorResponses(422, 503) },
      },
    },
    async (request) => {
      const { owner_id, include_public, tags, limit, offset } = request.query;
      const page = await requireRepository().list({
        ownerId: owner_id,
        includePublic: include_public,
        tags,
        limit,
        offset,
      });
      return { ...page, limit, offset };
    },
  );

  app.get<{ Params: Static<typeof TemplateIdParams> }>(
    '/chat/templates/:template_id',
    {
      schema: {
        tags: ['chat'],
        summary: 'One template',
        params: TemplateIdParams,
        response: { 200: Type.Ref('ChatTemplate'), ...errorResponses(404, 422, 503) },
      },
    },
    async (request) => {
      const template = await requireRepository().find(request.params.template_id);
      if (!template)
        throw new AppError('template_not_found', `template ${request.params.template_id} not found`);
      return template;
    },
  );

  app.put<{ Params: Static<typeof TemplateIdParams>; Body: TemplateInput }>(
    '/chat/templates/:template_id',
    {
      schema: {
        tags: ['chat'],
        summary: 'Replace a template (the body id, when given, must equal the path id)',
        params: TemplateIdParams,
        body: Type.Ref('ChatTemplateInput'),
        response: { 200: Type.Ref('ChatTemplate'), ...errorResponses(400, 404, 422, 503) },
      },
    },
    async (request) => {
      const { template_id: id } = request.params;
      const { id: bodyId, ...fields } = request.body;
      if (bodyId !== undefined && bodyId.toLowerCase() !== id.toLowerCase()) {
        throw new AppError('template_id_mismatch', `body id ${bodyId} differs from path id ${id}`);
      }
      checked(request.body);
      const updated = await requireRepository().replace(id, fields, context.now());
      if (!updated) throw new AppError('template_not_found', `template ${id} not found`);
      return updated;
    },
  );

  app.delete<{ Params: Static<typeof TemplateIdParams> }>(
    '/chat/templates/:template_id',
    {
      schema: {
        tags: ['chat'],
        summary: 'Delete a template',
        params: TemplateIdParams,
        response: { 204: Type.Null({ description: 'deleted' }), ...errorResponses(404, 422, 503) },
      },
    },
    async (request, reply) => {
      if (!(await requireRepository().remove(request.params.template_id))) {
        throw new AppError('template_not_found', `template ${request.params.template_id} not found`);
      }
      return reply.status(204).send();
    },
  );
}
