/** The object catalogue (table storage_objects): written on every put, read by the storage API. */
import { type Kysely, type Selectable, sql } from 'kysely';
import type { ObjectInfo } from '../storage/object-store.js';
import type { DatabaseSchema, StorageObjectTable } from './schema.js';

export type CatalogueRow = Selectable<StorageObjectTable>;

export interface CatalogueFilter {
  prefix?: string | undefined;
  delimiter?: string | undefined;
  /** Lower-case extensions with their dot, e.g. ['.md', '.json']. */
  extensions?: readonly string[] | undefined;
  correlation_id?: string | undefined;
  stage?: string | undefined;
  route_id?: string | undefined;
  /** ISO timestamps: objects created at or after, and before. */
  created_after?: string | undefined;
  created_before?: string | undefined;
  limit: number;
  offset: number;
}

/** `.md` for `a/b/page.MD`; '' when the last segment has no dot. */
export function extensionOf(key: string): string {
  const name = key.slice(key.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot).toLowerCase() : '';
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function likePrefix(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}

function catalogueRow(info: ObjectInfo) {
  return {
    key: info.key,
    size: info.size,
    content_type: info.content_type,
    sha256: info.sha256,
    created_at: info.created_at,
    metadata: JSON.stringify(info.metadata),
    execution_id: text(info.metadata.execution_id),
    stage: text(info.metadata.stage),
    route_id: text(info.metadata.route_id),
    correlation_id: text(info.metadata.correlation_id),
    extension: extensionOf(info.key),
  };
}

export function createStorageCatalogueRepository(db: Kysely<DatabaseSchema>) {
  function filtered(filter: Omit<CatalogueFilter, 'limit' | 'offset' | 'delimiter'>) {
    let query = db.selectFrom('storage_objects');
    if (filter.prefix) query = query.where(sql<boolean>`key like ${likePrefix(filter.prefix)} escape '\\'`);
    if (filter.extensions && filter.extensions.length > 0)
      query = query.where('extension', 'in', [...filter.extensions]);
    if (filter.correlation_id) query = query.where('correlation_id', '=', filter.correlation_id);
    if (filter.stage) query = query.where('stage', '=', filter.stage);
    if (filter.route_id) query = query.where('route_id', '=', filter.route_id);
    if (filter.created_after)
      query = query.where(sql<boolean>`created_at >= ${filter.created_after}::timestamptz`);
    if (filter.created_before)
      query = query.where(sql<boolean>`created_at < ${filter.created_before}::timestamptz`);
    return query;
  }

  async function upsertMany(infos: readonly ObjectInfo[]): Promise<void> {
    // PostgreSQL refuses to update one row twice in a statement: one row per key.
    const rows = new Map(infos.map((info) => [info.key, catalogueRow(info)]));
    if (rows.size === 0) return;
    await db
      .insertInto('storage_objects')
      .values([...rows.values()])
      .onConflict((conflict) =>
        conflict.column('key').doUpdateSet((excluded) => ({
          size: excluded.ref('excluded.size'),
          content_type: excluded.ref('excluded.content_type'),
          sha256: excluded.ref('excluded.sha256'),
          created_at: excluded.ref('excluded.created_at'),
          metadata: excluded.ref('excluded.metadata'),
          execution_id: excluded.ref('excluded.execution_id'),
          stage: excluded.ref('excluded.stage'),
          route_id: excluded.ref('excluded.route_id'),
          correlation_id: excluded.ref('excluded.correlation_id'),
          extension: excluded.ref('excluded.extension'),
        })),
      )
      .execute();
  }

  return {
    async upsert(info: ObjectInfo): Promise<void> {
      await upsertMany([info]);
    },

    /** Rows for many objects in one statement; the last of a repeated key wins. */
    upsertMany,

    async remove(key: string): Promise<void> {
      await db.deleteFrom('storage_objects').where('key', '=', key).execute();
    },

    async find(key: string): Promise<CatalogueRow | undefined> {
      return db.selectFrom('storage_objects').selectAll().where('key', '=', key).executeTakeFirst();
    },

    /**
     * Objects under the filter, sorted by key, paged; with a delimiter, only the objects
     * directly under the prefix, and the next-level folders as common prefixes.
     */
    async list(
      filter: CatalogueFilter,
    ): Promise<{ objects: CatalogueRow[]; commonPrefixes: string[]; total: number }> {
      const prefix = filter.prefix ?? '';
      const rest = sql<string>`substr(key, ${prefix.length + 1})`;
      let objects = filtered(filter);
      let commonPrefixes: string[] = [];
      if (filter.delimiter) {
        const delimiter = filter.delimiter;
        objects = objects.where(sql<boolean>`strpos(${rest}, ${delimiter}) = 0`);
        const folders = await filtered(filter)
          .where(sql<boolean>`strpos(${rest}, ${delimiter}) > 0`)
          .select(sql<string>`${prefix} || split_part(${rest}, ${delimiter}, 1) || ${delimiter}`.as('folder'))
          .distinct()
          .orderBy('folder')
          .limit(1000)
          .execute();
        commonPrefixes = folders.map((row) => row.folder);
      }
      const [rows, count] = await Promise.all([
        objects.selectAll().orderBy('key').limit(filter.limit).offset(filter.offset).execute(),
        objects
          .select((expression) => expression.fn.countAll<string>().as('total'))
          .executeTakeFirstOrThrow(),
      ]);
      return { objects: rows, commonPrefixes, total: Number(count.total) };
    },

    /** Distinct execution ids of the objects under the filter (for execution_prefixes). */
    async executionIds(filter: Omit<CatalogueFilter, 'limit' | 'offset' | 'delimiter'>): Promise<string[]> {
      const rows = await filtered(filter)
        .select('execution_id')
        .where('execution_id', 'is not', null)
        .distinct()
        .orderBy('execution_id')
        .limit(1000)
        .execute();
      return rows.map((row) => row.execution_id as string);
    },
  };
}

export type StorageCatalogueRepository = ReturnType<typeof createStorageCatalogueRepository>;
