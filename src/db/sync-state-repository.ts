/**
 * The state incremental source adapters keep between runs of a config (migration 0013). A
 * value is *settled* once the execution that wrote it completed; until then (or when that run
 * failed) it does not count as known, so the items are fetched again.
 */
import { type Kysely, sql } from 'kysely';
import type { SyncState } from '../adapters/adapter.js';
import type { DatabaseSchema } from './schema.js';

export function createSyncStateRepository(db: Kysely<DatabaseSchema>) {
  return {
    /** The state of one run of a config: reads see every run, writes are this run's. */
    forRun(configId: string, executionId: string, now: () => Date): SyncState {
      return {
        async settled(scope) {
          const rows = await db
            .selectFrom('adapter_sync_state as s')
            .innerJoin('executions as e', 'e.id', 's.execution_id')
            .select(['s.item_key', 's.value'])
            .where('s.config_id', '=', configId)
            .where('s.scope', '=', scope)
            .where('e.status', '=', 'completed')
            .execute();
          return new Map(rows.map((row) => [row.item_key, row.value]));
        },
        async all(scope) {
          const rows = await db
            .selectFrom('adapter_sync_state')
            .select(['item_key', 'value'])
            .where('config_id', '=', configId)
            .where('scope', '=', scope)
            .execute();
          return new Map(rows.map((row) => [row.item_key, row.value]));
        },
        async put(scope, items) {
          if (items.length === 0) return;
          const at = now().toISOString();
          await sql`
            insert into adapter_sync_state (config_id, scope, item_key, value, execution_id, updated_at)
            select ${configId}::uuid, ${scope}, item.key, item.value::jsonb, ${executionId}::uuid, ${at}::timestamptz
            from unnest(${items.map((item) => item.key)}::text[], ${items.map((item) => JSON.stringify(item.value))}::text[])
              as item (key, value)
            on conflict (config_id, scope, item_key)
            do update set value = excluded.value, execution_id = excluded.execution_id, updated_at = excluded.updated_at`.execute(
            db,
          );
        },
        async remove(scope, keys) {
          if (keys.length === 0) return;
          await db
            .deleteFrom('adapter_sync_state')
            .where('config_id', '=', configId)
            .where('scope', '=', scope)
            .where('item_key', 'in', [...keys])
            .execute();
        },
      };
    },
  };
}

export type SyncStateRepository = ReturnType<typeof createSyncStateRepository>;
