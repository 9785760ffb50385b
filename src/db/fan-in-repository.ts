/**
 * Fan-in for one execution (migration 0015). One statement inserts the arrival (nothing when
 * the item already arrived) and, only when it did insert, bumps the group's counter, returning
 * the new count. The counter row's lock orders concurrent arrivals, so exactly one of them —
 * on any instance — sees the count reach the total; it records itself as the group's
 * completer. A redelivered completing message finds itself recorded and completes again; any
 * other arrival never does.
 */
import { type Kysely, sql } from 'kysely';
import type { ExecutionFanIn } from '../ports/execution-state.js';
import type { DatabaseSchema } from './schema.js';

export function createExecutionFanIn(db: Kysely<DatabaseSchema>) {
  return {
    forExecution(executionId: string): ExecutionFanIn {
      return {
        async arrive(group, item, value, total) {
          const counted = await sql<{ arrived: number }>`
            with inserted as (
              insert into execution_fan_in_arrivals (execution_id, group_key, item_key, value)
              values (${executionId}::uuid, ${group}, ${item}, ${JSON.stringify(value)}::jsonb)
              on conflict do nothing
              returning 1
            )
            insert into execution_fan_in_groups (execution_id, group_key, arrived)
            select ${executionId}::uuid, ${group}, 1 from inserted
            on conflict (execution_id, group_key)
              do update set arrived = execution_fan_in_groups.arrived + 1
            returning arrived`.execute(db);
          // Undefined: the item had arrived before (a redelivery), so this may be the completer again.
          const arrived = counted.rows[0]?.arrived;
          if (arrived !== undefined && arrived < total) return undefined;
          if (arrived !== undefined) {
            await db
              .updateTable('execution_fan_in_groups')
              .set({ completed_by: item })
              .where('execution_id', '=', executionId)
              .where('group_key', '=', group)
              .where('completed_by', 'is', null)
              .execute();
          }
          const completion = await db
            .selectFrom('execution_fan_in_groups')
            .select('completed_by')
            .where('execution_id', '=', executionId)
            .where('group_key', '=', group)
            .executeTakeFirst();
          if (completion?.completed_by !== item) return undefined;
          const rows = await db
            .selectFrom('execution_fan_in_arrivals')
            .select(['item_key', 'value'])
            .where('execution_id', '=', executionId)
            .where('group_key', '=', group)
            .orderBy('item_key')
            .execute();
          return rows.map((row) => ({ item: row.item_key, value: row.value }));
        },
      };
    },
  };
}
