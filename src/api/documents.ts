/**
 * The knowledge index by document (Weir's own, in the chat group beside /chat/sources, which
 * lists it by execution): GET /chat/documents with filters on config, execution, language and
 * source, and DELETE /chat/documents/{document_id}, which removes a source from the index, its
 * segments and embeddings with it. The stored objects it was made from stay (storage is
 * another resource): a later run indexes the source again.
 */
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { AppError } from '../errors.js';
import { listIndexedDocuments, removeIndexedDocument } from '../search/indexed-documents.js';
import { toSearchLanguage } from '../search-index/language.js';
import type { ApiContext } from './context.js';
import { errorResponses, pageQuery } from './schemas/common.js';

const nullableString = Type.Union([Type.String(), Type.Null()]);

const DocumentsQuery = Type.Object({
  config_id: Type.Optional(Type.String({ format: 'uuid' })),
  execution_id: Type.Optional(Type.String({ format: 'uuid' })),
  language: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, description: 'ISO code or text search config (en, english)' }),
  ),
  source: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 2000,
      description: 'part of the source URL, object key or title',
    }),
  ),
  ...pageQuery({ defaultLimit: 50, maxLimit: 500 }),
});

const IndexedDocument = Type.Object({
  document_id: Type.String({ format: 'uuid' }),
  source_key: Type.String({ description: 'the URL, or the object key of content without one' }),
  url: nullableString,
  title: nullableString,
  language: Type.String({ description: 'ISO code (en), or the text search config without one (simple)' }),
  storage_key: nullableString,
  execution_id: Type.String({ description: 'the execution that indexed it last' }),
  config_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  config_name: nullableString,
  tag: nullableString,
  segment_count: Type.Integer({ minimum: 0 }),
  updated_at: Type.String({ format: 'date-time' }),
});

const DocumentsResponse = Type.Object({
  documents: Type.Array(IndexedDocument),
  total: Type.Integer({ minimum: 0 }),
  limit: Type.Integer(),
  offset: Type.Integer(),
});

const DocumentParams = Type.Object({ document_id: Type.String({ format: 'uuid' }) });

const RemovedResponse = Type.Object({
  document_id: Type.String({ format: 'uuid' }),
  source_key: Type.String(),
  removed_segments: Type.Integer({ minimum: 0 }),
});

export async function documentRoutes(app: FastifyInstance, context: ApiContext): Promise<void> {
  const database = () => {
    if (!context.database) throw new AppError('database_unavailable', 'the knowledge index is not available');
    return context.database.db;
  };

  app.get<{ Querystring: Static<typeof DocumentsQuery> }>(
    '/chat/documents',
    {
      schema: {
        tags: ['chat'],
        summary:
          "Indexed documents (Weir's own): source, title, language, config and execution, segment count, last update",
        querystring: DocumentsQuery,
        response: { 200: DocumentsResponse, ...errorResponses(400, 422, 503) },
      },
    },
    async (request) => {
      const { language, ...filter } = request.query;
      const searchLanguage = language === undefined ? undefined : toSearchLanguage(language);
      if (language !== undefined && !searchLanguage)
        throw new AppError('bad_request', `language ${JSON.stringify(language)} is not one search knows`);
      const page = await listIndexedDocuments(database(), { ...filter, language: searchLanguage });
      return { ...page, limit: filter.limit, offset: filter.offset };
    },
  );

  app.delete<{ Params: Static<typeof DocumentParams> }>(
    '/chat/documents/:document_id',
    {
      schema: {
        tags: ['chat'],
        summary:
          "Remove a document from the knowledge index (Weir's own): its segments and embeddings go with it; stored objects stay",
        params: DocumentParams,
        response: { 200: RemovedResponse, ...errorResponses(404, 422, 503) },
      },
    },
    async (request) => {
      const removed = await removeIndexedDocument(database(), request.params.document_id);
      if (!removed)
        throw new AppError(
          'document_not_found',
          `document ${request.params.document_id} is not in the index`,
        );
      return removed;
    },
  );
}
