import { Type } from 'typebox';
import { type SourceEntry, sourceEntryOf } from '../../consolidation/sources.js';
import type { CatalogueRow } from '../../db/storage-catalogue-repository.js';
import { type AdapterContext, type AdapterOutput, defineAdapter, PermanentFailure } from '../adapter.js';

const pageSize = 1000;

export const storageEnumerator = defineAdapter({
  type: 'storage_enumerator',
  group: 'knowledge',
  summary: 'List stored objects by prefix, stage, extension and date from the storage catalogue.',
  description:
    'Reads the storage catalogue (the database listing of every stored object), sorted by key. `emit: objects` (the ' +
    'default) sends one message per object, `{key, content_hash, size, content_type, created_at, stage, execution_id, ' +
    'metadata}`, to the step destination (fan-out): it can feed any route, as replay does. `emit: manifest` writes one ' +
    '`manifest.json` object listing them (`{objects: [{source_id, key, content_hash, title, url, created_at}]}`; ' +
    '`source_id` is the origin URL or document key, so one page ingested by several runs is one source) and emits ' +
    '`{manifest_key, object_count}`: the input of knowledge_diff. Fields of the input payload (`prefix`, `stage`, ' +
    '`extensions`, `created_after`, `created_before`) override the config. Sidecars are never listed.',
  config: Type.Object(
    {
      prefix: Type.String({
        default: '',
        description: 'key prefix, e.g. an execution id or `<execution>/<stage>/`',
      }),
      stage: Type.Optional(
        Type.String({ minLength: 1, description: 'only objects written by this stage name' }),
      ),
      extensions: Type.Array(Type.String({ pattern: '^\\.[A-Za-z0-9]+$' }), {
        default: [],
        description: 'only these extensions (with the dot, any case); empty: every object',
      }),
      created_after: Type.Optional(
        Type.String({ format: 'date-time', description: 'objects created at or after' }),
      ),
      created_before: Type.Optional(
        Type.String({ format: 'date-time', description: 'objects created before' }),
      ),
      emit: Type.Union([Type.Literal('objects'), Type.Literal('manifest')], {
        default: 'objects',
        description: '`objects`: a message per object; `manifest`: one manifest object and one message',
      }),
      max_objects: Type.Integer({
        minimum: 1,
        maximum: 1_000_000,
        default: 100_000,
        description: 'stop listing after this many',
      }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({
    prefix: Type.Optional(Type.String()),
    stage: Type.Optional(Type.String()),
    extensions: Type.Optional(Type.Array(Type.String())),
    created_after: Type.Optional(Type.String()),
    created_before: Type.Optional(Type.String()),
  }),
  output: Type.Union([
    Type.Object({
      key: Type.String(),
      content_hash: Type.String(),
      size: Type.Integer(),
      content_type: Type.String(),
      created_at: Type.String(),
      stage: Type.Union([Type.String(), Type.Null()]),
      execution_id: Type.Union([Type.String(), Type.Null()]),
      metadata: Type.Object({}),
    }),
    Type.Object({ manifest_key: Type.String(), object_count: Type.Integer() }),
  ]),
  fanOut: true,
  create: (config, resources) => {
    async function* enumerate(
      payload: Record<string, unknown>,
      context: AdapterContext,
    ): AsyncGenerator<AdapterOutput> {
      const catalogue = resources.storageCatalogue;
      if (!catalogue)
        throw new PermanentFailure('storage_enumerator needs the storage catalogue (a database)');
      const text = (field: string, fallback: string | undefined) =>
        typeof payload[field] === 'string' ? (payload[field] as string) : fallback;
      const extensions = Array.isArray(payload.extensions)
        ? (payload.extensions as string[])
        : config.extensions;
      const filter = {
        prefix: text('prefix', config.prefix),
        stage: text('stage', config.stage),
        extensions: extensions.map((extension) => extension.toLowerCase()),
        created_after: text('created_after', config.created_after),
        created_before: text('created_before', config.created_before),
      };
      const manifest: SourceEntry[] = [];
      let listed = 0;
      for (let offset = 0; listed < config.max_objects; offset += pageSize) {
        const { objects } = await catalogue.list({
          ...filter,
          limit: Math.min(pageSize, config.max_objects - listed),
          offset,
        });
        for (const row of objects) {
          listed++;
          if (config.emit === 'manifest') manifest.push(sourceEntryOf(infoOf(row)));
          else yield { payload: objectPayload(row) };
        }
        if (objects.length < pageSize) break;
      }
      if (config.emit === 'manifest') {
        const info = await context.writeObject('manifest.json', JSON.stringify({ objects: manifest }), {
          contentType: 'application/json',
        });
        yield { payload: { manifest_key: info.key, object_count: manifest.length } };
      }
    }
    return async (payload, context) => enumerate(payload, context);
  },
});

function infoOf(row: CatalogueRow) {
  return {
    key: row.key,
    sha256: row.sha256,
    created_at: new Date(row.created_at).toISOString(),
    metadata:
      typeof row.metadata === 'string' ? (JSON.parse(row.metadata) as Record<string, unknown>) : row.metadata,
  };
}

function objectPayload(row: CatalogueRow): Record<string, unknown> {
  const info = infoOf(row);
  return {
    key: row.key,
    content_hash: row.sha256,
    size: Number(row.size),
    content_type: row.content_type,
    created_at: info.created_at,
    stage: row.stage,
    execution_id: row.execution_id,
    metadata: info.metadata,
  };
}
