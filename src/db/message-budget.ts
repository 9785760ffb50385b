/**
 * The message budget of an execution (migration 0016, issue 30): every statement that queues
 * messages counts them in executions.created_messages, and queues none that would take the
 * execution past its message_budget; that execution fails instead, with budgetExceededError.
 * Shared by the finishes and addMessages of the executions repository.
 */
import { type RawBuilder, type Selectable, sql, type Transaction } from 'kysely';
import { uuidArray } from './array-parameter.js';
import type { DatabaseSchema, ExecutionTable } from './schema.js';

type ExecutionRow = Selectable<ExecutionTable>;

/**
 * The error an execution ends with when it passes its message budget (migration 0016), built
 * in SQL from its id and budget so every statement that counts messages words it the same.
 */
export function budgetExceededError(
  id: RawBuilder<unknown>,
  budget: RawBuilder<unknown>,
): RawBuilder<string> {
  return sql<string>`'execution ' || ${id}::text || ' created more than ' || ${budget}::text
    || ' messages (max_messages_per_execution); the messages past it were not queued and its pending'
    || ' messages are not processed. Do routes fan out in a cycle? A larger run needs a larger'
    || ' max_messages_per_execution (docs/engine.md)'`;
}

/**
 * Of the executions offered new messages (count by id), the ones that get none: not running
 * (failed, cancelled), or past their message budget with them. Read without a lock, as the
 * one-statement finish judges on its snapshot: concurrent writers may pass a budget by one
 * batch each.
 */
export async function refusedExecutions(
  transaction: Transaction<DatabaseSchema>,
  offered: ReadonlyMap<string, number>,
): Promise<Map<string, 'not running' | 'over budget'>> {
  const refused = new Map<string, 'not running' | 'over budget'>();
  if (offered.size === 0) return refused;
  const rows = await transaction
    .selectFrom('executions')
    .select(['id', 'status', 'message_budget', 'created_messages'])
    .where('id', 'in', [...offered.keys()])
    .execute();
  for (const row of rows) {
    if (row.status !== 'running') refused.set(row.id, 'not running');
    else if (
      row.message_budget !== null &&
      row.created_messages + (offered.get(row.id) ?? 0) > row.message_budget
    )
      refused.set(row.id, 'over budget');
  }
  return refused;
}

/** Fails the running executions among `ids` for passing their message budget; their rows. */
export async function failOverBudget(
  transaction: Transaction<DatabaseSchema>,
  ids: readonly string[],
  now: Date,
): Promise<ExecutionRow[]> {
  if (ids.length === 0) return [];
  const result = await sql<ExecutionRow>`
    update executions set status = 'failed',
      error = ${budgetExceededError(sql`id`, sql`message_budget`)},
      outcome = 'failed', first_errors = '[]'::jsonb,
      finished_at = ${now.toISOString()}::timestamptz, updated_at = ${now.toISOString()}::timestamptz
    where id = any(${uuidArray(ids)}::uuid[]) and status = 'running'
    returning *`.execute(transaction);
  return result.rows;
}
