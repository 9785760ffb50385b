/**
 * The state incremental source adapters keep between runs of a config (migration 0013). A
 * value is *settled* once the execution that wrote it completed; until then (or when that run
 * failed) it does not count as known, so the items are fetched again.
 */
import { type Kysely, sql } from 'kysely';
import type { ExecutionClaims, SyncState } from '../ports/execution-state.js';
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
        async all(scope, keys) {
          if (keys?.length === 0) return new Map();
          let query = db
            .selectFrom('adapter_sync_state')
            .select(['item_key', 'value'])
            .where('config_id', '=', configId)
            .where('scope', '=', scope);
          if (keys) query = query.where('item_key', 'in', [...keys]);
          const rows = await query.execute();
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

/**
 * Claims for one execution: `claim(scope, keys, limit)` returns the keys claimed now (absent
 * before), while the scope holds fewer than `limit` (roughly: concurrent claims may pass it by
 * one batch).
 */
export function createExecutionClaims(db: Kysely<DatabaseSchema>) {
  return {
    forExecution(executionId: string): ExecutionClaims {
      return {
        async claim(scope, keys, limit = Number.MAX_SAFE_INTEGER) {
          const unique = [...new Set(keys)];
          if (unique.length === 0) return new Set();
          const result = await sql<{ claim_key: string }>`
            with held as (
              select count(*) as count from execution_claims where execution_id = ${executionId}::uuid and scope = ${scope}
            ), fresh as (
              select key, row_number() over (order by position) as rank
              from unnest(${unique}::text[]) with ordinality as k (key, position)
              where not exists (
                select 1 from execution_claims c
                where c.execution_id = ${executionId}::uuid and c.scope = ${scope} and c.claim_key = k.key)
            )
            insert into execution_claims (execution_id, scope, claim_key)
            select ${executionId}::uuid, ${scope}, fresh.key from fresh, held
            where fresh.rank + held.count <= ${Math.min(limit, 2_147_483_647)}
            on conflict do nothing
            returning claim_key`.execute(db);
          return new Set(result.rows.map((row) => row.claim_key));
        },
      };
    },
  };
}
