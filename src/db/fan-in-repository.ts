/**
 * Fan-in for one execution (migration 0015): arrivals inserted once per item, and the group's
 * completion claimed by a single insert, so two instances receiving the last two items at the
 * same moment cannot both complete it (the later count sees both arrivals, and only one
 * completion row can exist).
 */
import { type Kysely, sql } from 'kysely';
import type { ExecutionFanIn } from '../adapters/adapter.js';
import type { DatabaseSchema } from './schema.js';

export function createExecutionFanIn(db: Kysely<DatabaseSchema>) {
  return {
    forExecution(executionId: string): ExecutionFanIn {
      return {
        async arrive(group, item, value, total) {
          await db
            .insertInto('execution_fan_in_arrivals')
            .values({
              execution_id: executionId,
              group_key: group,
              item_key: item,
              value: JSON.stringify(value),
            })
            .onConflict((conflict) => conflict.columns(['execution_id', 'group_key', 'item_key']).doNothing())
            .execute();
          await sql`
            insert into execution_fan_in_completions (execution_id, group_key, completed_by)
            select ${executionId}::uuid, ${group}, ${item}
            where (select count(*) from execution_fan_in_arrivals
                   where execution_id = ${executionId}::uuid and group_key = ${group}) >= ${total}
            on conflict do nothing`.execute(db);
          const completion = await db
            .selectFrom('execution_fan_in_completions')
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
