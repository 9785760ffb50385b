/**
 * Finishing messages (group commit): each moves from queued to its status, the outputs of the
 * applied ones are queued and the pending counters move, atomically (see
 * executions-repository.ts). An execution brought to zero ends with its outcome in the same
 * transaction on the transaction path, and in the statement after the finish on the
 * one-statement path (finish-statement.ts says why); until then it shows running.
 */
import { type Kysely, sql } from 'kysely';
import { int4Array, textArray, timestamptzArray, uuidArray } from './array-parameter.js';
import { executionOutcomes, lineageAsWritten } from './execution-outcome.js';
import type { ExecutionRow, FinishOutcome, FinishRequest, NewMessage } from './execution-types.js';
import { finishLineage, finishStatement } from './finish-statement.js';
import { failOverBudget, refusedExecutions } from './message-budget.js';
import { insertMessages } from './message-rows.js';
import type { DatabaseSchema } from './schema.js';
import { outboxFailures } from './webhook-outbox.js';

/** Outputs a batch of finishes may carry and still be written as one statement. */
const FINISH_STATEMENT_OUTPUTS = 4000;

/**
 * Finishes a batch of messages atomically (group commit): each moves from queued to its
 * status, outputs of the applied ones are inserted, pending counters move by
 * (outputs inserted - inputs finished) per execution, and executions brought to zero complete.
 * One statement unless the batch carries many outputs (then one transaction, outputs inserted
 * in chunks).
 */
export async function finishMessages(
  db: Kysely<DatabaseSchema>,
  requests: readonly FinishRequest[],
): Promise<FinishOutcome[]> {
  if (requests.length === 0) return [];
  let outputs = 0;
  for (const request of requests) outputs += request.outputs.length;
  return outputs > FINISH_STATEMENT_OUTPUTS
    ? finishInTransaction(db, requests)
    : finishInOneStatement(db, requests);
}

/**
 * The finish as one statement: no transaction held open between statements. On a PGlite
 * thread every statement of a transaction waits for this thread to send the next one, and
 * the session (one for the whole service) waits with it: the five statements of a finish
 * left the database idle for a fifth of an engine run.
 */
async function finishInOneStatement(
  db: Kysely<DatabaseSchema>,
  requests: readonly FinishRequest[],
): Promise<FinishOutcome[]> {
  // A message twice in one batch is applied once: the first request takes it.
  const firstOf = new Map<string, number>();
  requests.forEach((request, index) => {
    if (!firstOf.has(request.message.message_id)) firstOf.set(request.message.message_id, index);
  });
  const unique = requests.filter((request, index) => firstOf.get(request.message.message_id) === index);
  const now = requests[requests.length - 1]?.message.finished_at ?? new Date();
  const result = await finishStatement(unique, now).execute(db);
  // The answer names the exceptions (finish-statement.ts): messages not applied, outputs of
  // applied ones not inserted.
  const unappliedIds = new Set<string>();
  const uninsertedIds = new Set<string>();
  const ended: string[] = [];
  const drained: string[] = [];
  for (const row of result.rows) {
    if (row.kind === 'unapplied') unappliedIds.add(row.id);
    else if (row.kind === 'uninserted') uninsertedIds.add(row.id);
    else if (row.kind === 'ended') ended.push(row.id);
    else drained.push(row.id);
  }
  const outcomes: FinishOutcome[] = [];
  const lastApplied = new Map<string, number>();
  // An output id twice in one batch is inserted once: the first applied message that carries it.
  const offered = new Set<string>();
  requests.forEach((request, index) => {
    const applied =
      firstOf.get(request.message.message_id) === index && !unappliedIds.has(request.message.message_id);
    const inserted: string[] = [];
    if (applied)
      for (const { message_id: id } of request.outputs)
        if (!uninsertedIds.has(id) && !offered.has(id)) {
          offered.add(id);
          inserted.push(id);
        }
    if (applied) lastApplied.set(request.message.execution_id, outcomes.length);
    outcomes.push({ applied, inserted, finishedExecution: undefined });
  });
  // Once per execution: the row of an execution this batch ended, with the last of its
  // messages applied here. A drained one ends in the next statement (finish-statement.ts).
  const rows =
    ended.length > 0 ? await db.selectFrom('executions').selectAll().where('id', 'in', ended).execute() : [];
  rows.push(...(await endDrained(db, drained, now)));
  for (const row of rows) {
    const outcome = outcomes[lastApplied.get(row.id) as number];
    if (outcome) outcome.finishedExecution = row;
  }
  return outcomes;
}

/**
 * Ends the executions among `ids` that are running with nothing pending: `failed` or
 * `completed` with their outcome (execution-outcome.ts), decided from the lineage as committed,
 * in one statement; their rows. An execution that got messages again (a replay) or was ended
 * meanwhile is left alone: the row lock rechecks the condition.
 */
export async function endDrained(
  db: Kysely<DatabaseSchema>,
  ids: readonly string[],
  now: Date,
): Promise<ExecutionRow[]> {
  if (ids.length === 0) return [];
  const at = now.toISOString();
  const draining = sql`select id from executions
                       where id = any(${uuidArray(ids)}::uuid[]) and status = 'running' and pending_messages <= 0`;
  const result = await sql<ExecutionRow>`
    update executions as e set
      status = case when o.failed then 'failed' else 'completed' end,
      error = case when o.failed then o.summary else e.error end,
      outcome = o.outcome, first_errors = o.first_errors,
      finished_at = ${at}::timestamptz, updated_at = ${at}::timestamptz
    from (${executionOutcomes(lineageAsWritten(draining))}) o
    where e.id = o.execution_id and e.status = 'running' and e.pending_messages <= 0
    returning e.*`.execute(db);
  return result.rows;
}

async function finishInTransaction(
  db: Kysely<DatabaseSchema>,
  requests: readonly FinishRequest[],
): Promise<FinishOutcome[]> {
  return db.transaction().execute(async (transaction) => {
    const updated = await sql<{ message_id: string }>`
      with requests as (select * from unnest(
        ${uuidArray(requests.map((request) => request.message.message_id))}::uuid[],
        ${textArray(requests.map((request) => request.status))}::text[],
        ${textArray(requests.map((request) => request.error))}::text[],
        ${int4Array(requests.map((request) => request.message.attempts))}::int[],
        ${timestamptzArray(requests.map((request) => request.message.started_at))}::timestamptz[],
        ${timestamptzArray(requests.map((request) => request.message.finished_at))}::timestamptz[]
      ) as v(message_id, status, error, attempts, started_at, finished_at))
      ${finishLineage(sql`requests`)}
      returning l.message_id`.execute(transaction);
    const appliedIds = new Set(updated.rows.map((row) => row.message_id));
    // A message twice in one batch is applied once: the first request takes it.
    const applied = requests.map((request) => appliedIds.delete(request.message.message_id));
    const failures = requests.filter((request, index) => applied[index] && request.failedEvent);
    if (failures.length > 0)
      await sql`${outboxFailures(sql`select * from unnest(
          ${uuidArray(failures.map((request) => request.message.message_id))}::uuid[],
          ${textArray(failures.map((request) => JSON.stringify(request.failedEvent)))}::text[],
          ${timestamptzArray(failures.map((request) => request.message.finished_at))}::timestamptz[]
        ) as f(message_id, failed_event, finished_at)`)}`.execute(transaction);
    // The outputs of every applied message in one insert per execution (not one per message:
    // a batch of single-output stages cost a statement per message).
    const outputsByExecution = new Map<string, { outputs: NewMessage[]; finishedAt: Date }>();
    requests.forEach((request, index) => {
      if (!applied[index] || request.outputs.length === 0) return;
      const entry = outputsByExecution.get(request.message.execution_id) ?? {
        outputs: [],
        finishedAt: request.message.finished_at,
      };
      entry.outputs.push(...request.outputs);
      // Queued when the batch is written: the latest finish of the messages that emitted them.
      if (request.message.finished_at > entry.finishedAt) entry.finishedAt = request.message.finished_at;
      outputsByExecution.set(request.message.execution_id, entry);
    });
    const refused = await refusedExecutions(
      transaction,
      new Map([...outputsByExecution].map(([id, entry]) => [id, entry.outputs.length])),
    );
    const insertedIds = new Set<string>();
    for (const [executionId, { outputs, finishedAt }] of outputsByExecution) {
      if (refused.has(executionId)) continue;
      for (const id of await insertMessages(transaction, executionId, outputs, finishedAt))
        insertedIds.add(id);
    }
    const outcomes: FinishOutcome[] = [];
    const deltas = new Map<string, { pending: number; created: number }>();
    const lastApplied = new Map<string, number>();
    requests.forEach((request, index) => {
      const executionId = request.message.execution_id;
      const inserted = applied[index]
        ? request.outputs.map((output) => output.message_id).filter((id) => insertedIds.delete(id))
        : [];
      if (applied[index]) {
        const delta = deltas.get(executionId) ?? { pending: 0, created: 0 };
        deltas.set(executionId, {
          pending: delta.pending + inserted.length - 1,
          created: delta.created + inserted.length,
        });
        lastApplied.set(executionId, outcomes.length);
      }
      outcomes.push({ applied: applied[index] as boolean, inserted, finishedExecution: undefined });
    });
    const now = requests[requests.length - 1]?.message.finished_at ?? new Date();
    // In id order, as the one-statement finish locks them: no deadlock between instances.
    for (const [executionId, delta] of [...deltas].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      await transaction
        .updateTable('executions')
        .set((expression) => ({
          pending_messages: expression('pending_messages', '+', delta.pending),
          created_messages: expression('created_messages', '+', delta.created),
          updated_at: now,
        }))
        .where('id', '=', executionId)
        .execute();
    }
    const overBudget = [...refused].filter(([, reason]) => reason === 'over budget').map(([id]) => id);
    for (const row of await failOverBudget(transaction, overBudget, now)) {
      const outcome = outcomes[lastApplied.get(row.id) as number];
      if (outcome) outcome.finishedExecution = row;
    }
    for (const row of await endDrained(transaction, [...deltas.keys()], now)) {
      const outcome = outcomes[lastApplied.get(row.id) as number];
      if (outcome) outcome.finishedExecution = row;
    }
    return outcomes;
  });
}
