/** Stored pipeline configs (table pipeline_configs). Soft delete: a deleted config is inactive. */
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { DatabaseSchema, PipelineConfigTable } from './schema.js';

export type StoredConfig = Selectable<PipelineConfigTable>;

export type NewConfig = Pick<
  Insertable<PipelineConfigTable>,
  'id' | 'name' | 'description' | 'origin' | 'config_yaml' | 'config_hash'
> & { now: Date };

export interface ConfigChanges {
  name?: string;
  description?: string | null;
  config_yaml?: string;
  config_hash?: string;
  now: Date;
}

export function createConfigsRepository(db: Kysely<DatabaseSchema>) {
  return {
    async insert(config: NewConfig): Promise<StoredConfig> {
      const { now, ...fields } = config;
      return db
        .insertInto('pipeline_configs')
        .values({ ...fields, created_at: now, updated_at: now })
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    async findActive(id: string): Promise<StoredConfig | undefined> {
      return db
        .selectFrom('pipeline_configs')
        .selectAll()
        .where('id', '=', id)
        .where('is_active', '=', true)
        .executeTakeFirst();
    },

    async findActiveByOrigin(origin: string): Promise<StoredConfig | undefined> {
      return db
        .selectFrom('pipeline_configs')
        .selectAll()
        .where('origin', '=', origin)
        .where('is_active', '=', true)
        .executeTakeFirst();
    },

    /** Active configs, oldest first (stable paging), and how many active configs exist. */
    async listActive(page: {
      limit: number;
      offset: number;
    }): Promise<{ configs: StoredConfig[]; total: number }> {
      const [configs, count] = await Promise.all([
        db
          .selectFrom('pipeline_configs')
          .selectAll()
          .where('is_active', '=', true)
          .orderBy('created_at')
          .orderBy('id')
          .limit(page.limit)
          .offset(page.offset)
          .execute(),
        db
          .selectFrom('pipeline_configs')
          .select((expression) => expression.fn.countAll<string>().as('total'))
          .where('is_active', '=', true)
          .executeTakeFirstOrThrow(),
      ]);
      return { configs, total: Number(count.total) };
    },

    /** Applies changes and bumps the version; undefined when the config is missing or inactive. */
    async update(id: string, changes: ConfigChanges): Promise<StoredConfig | undefined> {
      const { now, ...fields } = changes;
      return db
        .updateTable('pipeline_configs')
        .set((expression) => ({ ...fields, updated_at: now, version: expression('version', '+', 1) }))
        .where('id', '=', id)
        .where('is_active', '=', true)
        .returningAll()
        .executeTakeFirst();
    },

    /** Soft delete; false when there was no active config with this id. */
    async deactivate(id: string, now: Date): Promise<boolean> {
      const result = await db
        .updateTable('pipeline_configs')
        .set({ is_active: false, deleted_at: now, updated_at: now })
        .where('id', '=', id)
        .where('is_active', '=', true)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
  };
}

export type ConfigsRepository = ReturnType<typeof createConfigsRepository>;
