/**
 * Ending a running execution from outside its messages (a cancel, or the orchestrator failing
 * it): its queued messages are settled and its outcome written in one transaction.
 */
import { type Kysely, sql } from 'kysely';
import { executionOutcomes, lineageAsWritten } from './execution-outcome.js';
import type { ExecutionRow } from './execution-types.js';
import type { DatabaseSchema, ExecutionStatus } from './schema.js';

/** running -> `status`; undefined when the execution was not running. */
export async function endExecution(
  db: Kysely<DatabaseSchema>,
  id: string,
  status: Exclude<ExecutionStatus, 'running'>,
  now: Date,
  error: string | null = null,
) {
  // An ended execution processes no more messages: its queued ones are settled `skipped`
  // in the same transaction, so it shows 0 pending and its statistics add up. A handler
  // still running finishes a message that is no longer queued, which changes nothing.
  // The lineage is settled first, so the outcome written with the status (and carried by
  // the event the status change raises) counts those skips: unexpected, the engine's.
  return db.transaction().execute(async (transaction) => {
    const running = await transaction
      .selectFrom('executions')
      .select('id')
      .where('id', '=', id)
      .where('status', '=', 'running')
      .forUpdate()
      .executeTakeFirst();
    if (!running) return undefined;
    await transaction
      .updateTable('lineage')
      .set({ status: 'skipped', error: `execution ${status}`, finished_at: now })
      .where('execution_id', '=', id)
      .where('status', '=', 'queued')
      .execute();
    const at = now.toISOString();
    const ended = await sql<ExecutionRow>`
      update executions as e set status = ${status}, error = ${error}, pending_messages = 0,
        finished_at = ${at}::timestamptz, updated_at = ${at}::timestamptz,
        outcome = case when ${status}::text = 'failed' then 'failed' else coalesce(o.outcome, 'empty') end,
        first_errors = coalesce(o.first_errors, '[]'::jsonb)
      from (select ${id}::uuid as id) target
      left join (${executionOutcomes(lineageAsWritten(sql`select ${id}::uuid`))}) o on o.execution_id = target.id
      where e.id = target.id
      returning e.*`.execute(transaction);
    return ended.rows[0];
  });
}
