/**
 * Creating an execution (with its init message) and adding queued messages to a running one,
 * each with the execution's pending and created counters in the same write (see
 * executions-repository.ts).
 */
import { type Kysely, sql } from 'kysely';
import type { AddOutcome, ExecutionRow, NewExecution, NewMessage } from './execution-types.js';
import { budgetExceededError, failOverBudget } from './message-budget.js';
import { insertMessages, messageRows } from './message-rows.js';
import type { DatabaseSchema } from './schema.js';

/**
 * Messages added to a running execution in one statement rather than a transaction. On a PGlite
 * thread each statement of a transaction waits for this thread to send the next one, and the
 * session (one for the whole service) waits with it.
 */
const ADD_STATEMENT_MESSAGES = 4000;

/** Creates the execution and, unless skipped, its queued init message, atomically. */
export async function createExecution(
  db: Kysely<DatabaseSchema>,
  execution: NewExecution,
): Promise<ExecutionRow> {
  return db.transaction().execute(async (transaction) => {
    const row = await transaction
      .insertInto('executions')
      .values({
        id: execution.id,
        config_id: execution.config_id,
        config_version: execution.config_version,
        config_hash: execution.config_hash,
        config_yaml: execution.config_yaml,
        tag: execution.tag,
        status: 'running',
        skip_init_message: execution.skip_init_message,
        init_payload: JSON.stringify(execution.init_payload),
        pending_messages: execution.init ? 1 : 0,
        message_budget: execution.message_budget ?? null,
        created_messages: execution.init ? 1 : 0,
        created_at: execution.now,
        updated_at: execution.now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    if (execution.init) await insertMessages(transaction, execution.id, [execution.init], execution.now);
    return row;
  });
}

/**
 * Adds queued messages to a running execution (replay; early outputs of a large fan-out):
 * rows, pending and created counters in one transaction. Inserts nothing when the execution
 * is not running, or when the messages would pass its budget (it then fails).
 */
export async function addMessages(
  db: Kysely<DatabaseSchema>,
  executionId: string,
  messages: readonly NewMessage[],
  now: Date,
): Promise<AddOutcome> {
  if (messages.length > ADD_STATEMENT_MESSAGES)
    return db.transaction().execute(async (transaction) => {
      const running = await transaction
        .selectFrom('executions')
        .select(['id', 'message_budget', 'created_messages'])
        .where('id', '=', executionId)
        .where('status', '=', 'running')
        .forUpdate()
        .executeTakeFirst();
      if (!running) return { inserted: [], failedExecution: undefined };
      if (
        running.message_budget !== null &&
        running.created_messages + messages.length > running.message_budget
      )
        return {
          inserted: [],
          failedExecution: (await failOverBudget(transaction, [executionId], now))[0],
        };
      const inserted = await insertMessages(transaction, executionId, messages, now);
      await transaction
        .updateTable('executions')
        .set((expression) => ({
          pending_messages: expression('pending_messages', '+', inserted.length),
          created_messages: expression('created_messages', '+', inserted.length),
          updated_at: now,
        }))
        .where('id', '=', executionId)
        .execute();
      return { inserted, failedExecution: undefined };
    });
  // Up to a few thousand (early outputs of a fan-out come in chunks): one statement, no
  // transaction held open between statements (see message-finishing.ts).
  const at = now.toISOString();
  // The ids inserted are answered only when some were not (already queued: a replay of a chunk
  // after a crash); else the counter's row says how many, and they are all of `messages`. The
  // 2,000 ids of a fan-out's chunk cost more to answer than to count (finish-statement.ts).
  const result = await sql<{
    message_id: string | null;
    inserted: number | null;
    over_budget: boolean | null;
  }>`
    with running as (
      select id, message_budget is not null
                 and created_messages + ${messages.length}::int > message_budget as over_budget
      from executions where id = ${executionId}::uuid and status = 'running' for update
    ), inserted as (
      insert into lineage (message_id, correlation_id, execution_id, route_id, stage, emitted_by, status, envelope, queued_at)
      select v.message_id, v.correlation_id, r.id, v.route_id, v.stage, v.emitted_by, 'queued',
             v.envelope, ${at}::timestamptz
      from running r, ${messageRows(messages)}
      where not r.over_budget
      on conflict (message_id) do nothing
      returning message_id
    ), counted as (
      update executions as e set
        pending_messages = e.pending_messages + (select count(*) from inserted),
        created_messages = e.created_messages + (select count(*) from inserted),
        status = case when r.over_budget then 'failed' else e.status end,
        error = case when r.over_budget then ${budgetExceededError(sql`e.id`, sql`e.message_budget`)} else e.error end,
        outcome = case when r.over_budget then 'failed' else e.outcome end,
        first_errors = case when r.over_budget then '[]'::jsonb else e.first_errors end,
        finished_at = case when r.over_budget then ${at}::timestamptz else e.finished_at end,
        updated_at = ${at}::timestamptz
      from running r where e.id = r.id
      returning r.over_budget
    )
    select message_id, null::int as inserted, null::boolean as over_budget from inserted
      where (select count(*) from inserted) < ${messages.length}::int
    union all select null, (select count(*) from inserted)::int, over_budget from counted`.execute(db);
  const counted = result.rows.find((row) => row.message_id === null);
  const failed = counted?.over_budget === true;
  const inserted =
    counted?.inserted === messages.length
      ? messages.map((message) => message.message_id)
      : result.rows.flatMap((row) => (row.message_id === null ? [] : [row.message_id]));
  return {
    inserted,
    failedExecution: failed
      ? await db.selectFrom('executions').selectAll().where('id', '=', executionId).executeTakeFirst()
      : undefined,
  };
}
