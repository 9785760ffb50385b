/**
 * Storage group (spec 4.8): list objects from the database catalogue with every filter of the
 * spec, object metadata, streamed content (with single byte ranges), and folder browsing.
 * Object keys contain `/`. A generated client sends a key as one percent-encoded segment
 * (`exec%2Fstage%2Fa.md`), which the documented `{key}` and `{key}/metadata` routes match;
 * people and links write the slashes, which a wildcard route matches (as it does keys longer
 * than the router's 100-character limit on one parameter). All three read the path the same
 * way: a path ending in `/metadata` is the metadata of the key before it when that object
 * exists, else an object key itself.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { type Static, Type } from 'typebox';
import type { CatalogueRow, StorageCatalogueRepository } from '../db/storage-catalogue-repository.js';
import { AppError } from '../errors.js';
import { assertValidKey, assertValidPrefix, MAX_KEY_BYTES } from '../storage/keys.js';
import type { ObjectInfo, ObjectStore } from '../storage/object-store.js';
import { storedObjectHeaders } from './browser-headers.js';
import type { ApiContext } from './context.js';
import { errorResponses, pageQuery } from './schemas/common.js';
import { objectBytesResponse } from './schemas/media.js';

const ListQuery = Type.Object({
  correlation_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  stage: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  route_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  prefix: Type.Optional(Type.String({ maxLength: MAX_KEY_BYTES, description: 'key prefix' })),
  delimiter: Type.Optional(Type.String({ minLength: 1, maxLength: 8, description: 'typically /' })),
  extension: Type.Optional(Type.String({ maxLength: 200, description: 'comma-separated, e.g. .md,.json' })),
  include_metadata: Type.Boolean({ default: true }),
  include_execution_info: Type.Boolean({ default: false }),
  ...pageQuery(),
});
const objectKey = Type.String({
  minLength: 1,
  maxLength: MAX_KEY_BYTES,
  description: 'the full object key; its slashes may be sent as %2F',
});
const KeyParams = Type.Object({ key: objectKey });
const WildcardParams = Type.Object({ '*': objectKey });
const BrowseQuery = Type.Object({
  path: Type.String({ default: '', maxLength: MAX_KEY_BYTES, description: 'folder; empty for the root' }),
});

function parseExtensions(text: string | undefined): string[] | undefined {
  if (!text) return undefined;
  return text
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter((item) => item.length > 0)
    .map((item) => (item.startsWith('.') ? item : `.${item}`));
}

function presentRow(row: CatalogueRow, includeMetadata: boolean) {
  return {
    key: row.key,
    size: Number(row.size),
    content_type: row.content_type,
    sha256: row.sha256,
    created_at: new Date(row.created_at).toISOString(),
    ...(includeMetadata ? { metadata: row.metadata } : {}),
  };
}

/** `bytes=a-b`, `bytes=a-` or `bytes=-n` against `size`; undefined = whole; null = unsatisfiable. */
function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | undefined | null {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return null;
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (start >= size || end < start) return null;
  return { start, end };
}

export async function storageRoutes(app: FastifyInstance, context: ApiContext): Promise<void> {
  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/storage/objects',
    {
      schema: {
        tags: ['storage'],
        summary: 'List stored objects (from the catalogue), with metadata filters and folders',
        querystring: ListQuery,
        response: { 200: Type.Ref('ListObjectsResponse'), ...errorResponses(400, 422, 503) },
      },
    },
    async (request) => {
      const { catalogue } = storagePorts(context);
      const query = request.query;
      if (query.prefix) assertValidPrefix(query.prefix);
      const filter = {
        prefix: query.prefix,
        delimiter: query.delimiter,
        extensions: parseExtensions(query.extension),
        correlation_id: query.correlation_id,
        stage: query.stage,
        route_id: query.route_id,
      };
      const page = await catalogue.list({ ...filter, limit: query.limit, offset: query.offset });
      const executionIds = await catalogue.executionIds(filter);
      const executions = context.executions;
      const executionPrefixes = await Promise.all(
        executionIds.map(async (executionId) => {
          const entry: { prefix: string; execution_id: string; execution?: Record<string, unknown> | null } =
            {
              prefix: `${executionId}/`,
              execution_id: executionId,
            };
          if (query.include_execution_info) {
            const row = executions
              ? await executions.findExecution(executionId).catch(() => undefined)
              : undefined;
            entry.execution = row
              ? {
                  status: row.status,
                  config_id: row.config_id,
                  tag: row.tag,
                  created_at: new Date(row.created_at).toISOString(),
                  finished_at: row.finished_at ? new Date(row.finished_at).toISOString() : null,
                }
              : null;
          }
          return entry;
        }),
      );
      return {
        objects: page.objects.map((row) => presentRow(row, query.include_metadata)),
        common_prefixes: page.commonPrefixes,
        execution_prefixes: executionPrefixes,
        total: page.total,
        limit: query.limit,
        offset: query.offset,
      };
    },
  );

  app.get<{ Params: Static<typeof KeyParams> }>(
    '/storage/objects/:key/metadata',
    {
      schema: {
        tags: ['storage'],
        summary: "An object's size, content type, SHA-256 and pipeline metadata",
        params: KeyParams,
        response: { 200: Type.Ref('ObjectMetadataResponse'), ...errorResponses(400, 404, 422, 503) },
      },
    },
    async (request, reply) =>
      serveObjectPath(context, `${request.params.key}/metadata`, reply, request.headers.range),
  );

  app.get<{ Params: Static<typeof KeyParams> }>(
    '/storage/objects/:key',
    {
      schema: {
        tags: ['storage'],
        summary: 'Object content, streamed with its content type; single byte ranges supported',
        params: KeyParams,
        response: {
          200: objectBytesResponse("the object's bytes"),
          206: objectBytesResponse('the requested byte range (Range: bytes=a-b)'),
          416: Type.Null({ description: 'the range is outside the object; Content-Range gives its size' }),
          ...errorResponses(400, 404, 422, 503),
        },
      },
    },
    async (request, reply) => serveObjectPath(context, request.params.key, reply, request.headers.range),
  );

  app.get<{ Params: Static<typeof WildcardParams> }>(
    '/storage/objects/*',
    {
      schema: {
        // The two routes above document this one: same answers, keys written with slashes.
        hide: true,
        params: WildcardParams,
        response: { ...errorResponses(400, 404, 422, 503) },
      },
    },
    async (request, reply) => serveObjectPath(context, request.params['*'], reply, request.headers.range),
  );

  app.get<{ Querystring: Static<typeof BrowseQuery> }>(
    '/storage/browse',
    {
      schema: {
        tags: ['storage'],
        summary: 'Folders and files directly under a path',
        querystring: BrowseQuery,
        response: { 200: Type.Ref('BrowseResponse'), ...errorResponses(400, 404, 422, 503) },
      },
    },
    async (request) => {
      const { catalogue } = storagePorts(context);
      const path = request.query.path.replace(/^\/+|\/+$/g, '');
      const prefix = path ? `${path}/` : '';
      if (prefix) assertValidPrefix(prefix);
      const page = await catalogue.list({ prefix, delimiter: '/', limit: 1000, offset: 0 });
      if (path && page.objects.length === 0 && page.commonPrefixes.length === 0) {
        throw new AppError('object_not_found', `storage path ${JSON.stringify(path)} not found`);
      }
      return {
        path,
        parent: path ? (path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '') : null,
        directories: page.commonPrefixes.map((folder) => ({
          name: folder.slice(prefix.length, -1),
          path: folder.slice(0, -1),
        })),
        files: page.objects.map((row) => ({
          name: row.key.slice(prefix.length),
          key: row.key,
          size: Number(row.size),
          content_type: row.content_type,
          created_at: new Date(row.created_at).toISOString(),
        })),
      };
    },
  );
}

async function statOrThrow(storage: ObjectStore, key: string): Promise<ObjectInfo> {
  assertValidKey(key);
  const info = await storage.stat(key);
  if (!info) throw new AppError('object_not_found', `object ${JSON.stringify(key)} not found`);
  return info;
}

async function sendContent(
  reply: FastifyReply,
  storage: ObjectStore,
  info: ObjectInfo,
  range: string | undefined,
) {
  const wanted = parseRange(range, info.size);
  // Crawled HTML or SVG opened from here must not run as a page of the API's origin.
  reply
    .headers(storedObjectHeaders(info.key, info.content_type))
    .header('accept-ranges', 'bytes')
    .header('etag', `"${info.sha256}"`)
    .type(info.content_type);
  if (wanted === null) {
    return reply.status(416).header('content-range', `bytes */${info.size}`).send();
  }
  if (wanted) {
    reply
      .status(206)
      .header('content-range', `bytes ${wanted.start}-${wanted.end}/${info.size}`)
      .header('content-length', wanted.end - wanted.start + 1);
    return reply.send(await storage.stream(info.key, wanted));
  }
  reply.header('content-length', info.size);
  return reply.send(await storage.stream(info.key));
}

function storagePorts(context: ApiContext): { storage: ObjectStore; catalogue: StorageCatalogueRepository } {
  if (!context.storage || !context.catalogue) {
    throw new AppError('storage_unavailable', 'object storage is not available');
  }
  return { storage: context.storage, catalogue: context.catalogue };
}

/** Metadata of `<key>` for a path `<key>/metadata` when that object exists, else the content at `path`. */
async function serveObjectPath(
  context: ApiContext,
  path: string,
  reply: FastifyReply,
  range: string | undefined,
) {
  const { storage } = storagePorts(context);
  if (path.endsWith('/metadata')) {
    const key = path.slice(0, -'/metadata'.length);
    const info = key.length > 0 ? await storage.stat(key).catch(() => undefined) : undefined;
    if (info) return reply.send({ ...info });
  }
  return sendContent(reply, storage, await statOrThrow(storage, path), range);
}
