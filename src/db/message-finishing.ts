/**
 * Finishing messages (group commit): each moves from queued to its status, the outputs of the
 * applied ones are queued, the pending counters move, and an execution brought to zero ends
 * with its outcome, all atomically (see executions-repository.ts).
 */
import { type Kysely, sql } from 'kysely';
import { byteaArray, int4Array, textArray, timestamptzArray, uuidArray } from './array-parameter.js';
import { executionOutcomes, lineageAsWritten } from './execution-outcome.js';
import type {
  ExecutionRow,
  FinishedMessage,
  FinishOutcome,
  FinishRequest,
  NewMessage,
} from './execution-types.js';
import { budgetExceededError, failOverBudget, refusedExecutions } from './message-budget.js';
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
  const appliedIds = new Set<string>();
  const insertedIds = new Set<string>();
  const finished: string[] = [];
  for (const row of result.rows) {
    if (row.kind === 'applied') appliedIds.add(row.id);
    else if (row.kind === 'inserted') insertedIds.add(row.id);
    else finished.push(row.id);
  }
  const outcomes: FinishOutcome[] = [];
  const lastApplied = new Map<string, number>();
  requests.forEach((request, index) => {
    const applied =
      firstOf.get(request.message.message_id) === index && appliedIds.has(request.message.message_id);
    const inserted = applied
      ? request.outputs.map((output) => output.message_id).filter((id) => insertedIds.delete(id))
      : [];
    if (applied) lastApplied.set(request.message.execution_id, outcomes.length);
    outcomes.push({ applied, inserted, finishedExecution: undefined });
  });
  // Once per execution: the row of an execution this batch finished.
  for (const executionId of finished) {
    const outcome = outcomes[lastApplied.get(executionId) as number];
    if (!outcome) continue;
    const row = await db
      .selectFrom('executions')
      .selectAll()
      .where('id', '=', executionId)
      .executeTakeFirstOrThrow();
    outcome.finishedExecution = row.outcome === null ? ((await settleOutcome(db, executionId)) ?? row) : row;
  }
  return outcomes;
}

/**
 * The one-statement finish of `unique` (no message twice) at `now`: rows of kind `applied`
 * (messages finished), `inserted` (outputs queued) and `finished` (executions it ended).
 */
function finishStatement(unique: readonly FinishRequest[], now: Date) {
  // Outputs are queued when the batch is written: the latest finish of their execution's messages.
  const queuedAt = new Map<string, Date>();
  for (const { message } of unique) {
    const latest = queuedAt.get(message.execution_id);
    if (!latest || message.finished_at > latest) queuedAt.set(message.execution_id, message.finished_at);
  }
  const outputs: Array<{ parent: FinishedMessage; output: NewMessage }> = [];
  for (const request of unique)
    for (const output of request.outputs) outputs.push({ parent: request.message, output });
  const column = <T>(pick: (request: FinishRequest) => T) => unique.map(pick);
  const outputColumn = <T>(pick: (entry: { parent: FinishedMessage; output: NewMessage }) => T) =>
    outputs.map(pick);
  return sql<{ kind: 'applied' | 'inserted' | 'finished'; id: string }>`
    with requests as (
      select * from unnest(
        ${uuidArray(column((request) => request.message.message_id))}::uuid[],
        ${textArray(column((request) => request.status))}::text[],
        ${textArray(column((request) => request.error))}::text[],
        ${int4Array(column((request) => request.message.attempts))}::int[],
        ${timestamptzArray(column((request) => request.message.started_at))}::timestamptz[],
        ${timestamptzArray(column((request) => request.message.finished_at))}::timestamptz[],
        ${textArray(column((request) => (request.failedEvent ? JSON.stringify(request.failedEvent) : null)))}::text[]
      ) as v(message_id, status, error, attempts, started_at, finished_at, failed_event)
    ), applied as (
      update lineage as l set
        status = v.status, error = v.error, attempts = v.attempts, envelope = null,
        started_at = v.started_at, finished_at = v.finished_at,
        duration_ms = extract(epoch from (v.finished_at - v.started_at)) * 1000
      from requests v
      where l.message_id = v.message_id and l.status = 'queued'
      returning l.message_id, l.execution_id
    ), failed_events as (
      ${outboxFailures(sql`select v.message_id, v.failed_event, v.finished_at from requests v join applied a on a.message_id = v.message_id`)}
    ), outputs as (
      select * from unnest(
        ${uuidArray(outputColumn(({ parent }) => parent.message_id))}::uuid[],
        ${uuidArray(outputColumn(({ output }) => output.message_id))}::uuid[],
        ${uuidArray(outputColumn(({ output }) => output.correlation_id))}::uuid[],
        ${uuidArray(outputColumn(({ parent }) => parent.execution_id))}::uuid[],
        ${textArray(outputColumn(({ output }) => output.route_id))}::text[],
        ${textArray(outputColumn(({ output }) => output.stage))}::text[],
        ${textArray(outputColumn(({ output }) => output.emitted_by))}::text[],
        ${byteaArray(outputColumn(({ output }) => output.envelope))}::bytea[],
        ${timestamptzArray(outputColumn(({ parent }) => queuedAt.get(parent.execution_id) as Date))}::timestamptz[]
      ) as o(parent_id, message_id, correlation_id, execution_id, route_id, stage, emitted_by, envelope, queued_at)
    ), offered as (
      select o.execution_id, count(*)::int as offered
      from outputs o join applied a on a.message_id = o.parent_id
      group by o.execution_id
    ), refused as (
      -- Executions whose outputs are not queued: no longer running (failed, cancelled), or
      -- past their message budget with them (judged on this statement's snapshot: concurrent
      -- finishes on other instances may pass it by one batch each).
      select f.execution_id, e.status = 'running' as over_budget
      from offered f join executions e on e.id = f.execution_id
      where e.status <> 'running'
         or (e.message_budget is not null and e.created_messages + f.offered > e.message_budget)
    ), inserted as (
      insert into lineage (message_id, correlation_id, execution_id, route_id, stage, emitted_by, status, envelope, queued_at)
      select o.message_id, o.correlation_id, o.execution_id, o.route_id, o.stage, o.emitted_by, 'queued',
             o.envelope, o.queued_at
      from outputs o join applied a on a.message_id = o.parent_id
      where o.execution_id not in (select execution_id from refused)
      on conflict (message_id) do nothing
      returning message_id, execution_id
    ), deltas as (
      select c.execution_id, sum(c.change)::int as delta, sum(c.created)::int as created,
             coalesce(bool_or(r.over_budget), false) as over_budget
      from (select execution_id, -1 as change, 0 as created from applied
            union all select execution_id, 1, 1 from inserted) as c
      left join refused r on r.execution_id = c.execution_id
      group by c.execution_id
    ), before as (
      -- The statement's snapshot: the status before this statement's update.
      select id, status from executions where id in (select execution_id from deltas)
    ), draining as (
      select d.execution_id from deltas d join executions e on e.id = d.execution_id
      where e.status = 'running' and e.pending_messages + d.delta <= 0
    ), outcomes as (
      ${executionOutcomes(lineageAsWritten(sql`select execution_id from draining`, sql`requests`))}
    ), locked as materialized (
      -- The execution rows locked in id order before any is updated: two instances finishing
      -- batches that span the same executions take their locks in the same order, so they
      -- wait for each other instead of deadlocking.
      select id from executions where id in (select execution_id from deltas) order by id for update
    ), counted as (
      -- An execution drained by a concurrent finish that this statement's snapshot missed has
      -- no outcome row: it ends completed, as every execution did before outcomes existed, and
      -- its outcome is decided just after the statement (settleOutcome), which sees the rows
      -- the concurrent finish wrote. One past its message budget fails, whatever is pending.
      update executions as e set
        pending_messages = e.pending_messages + d.delta,
        created_messages = e.created_messages + d.created,
        updated_at = ${now.toISOString()}::timestamptz,
        status = case when e.status <> 'running' then e.status
                      when d.over_budget then 'failed'
                      when e.pending_messages + d.delta <= 0
                      then case when o.failed then 'failed' else 'completed' end else e.status end,
        error = case when e.status <> 'running' then e.error
                     when d.over_budget then ${budgetExceededError(sql`e.id`, sql`e.message_budget`)}
                     when e.pending_messages + d.delta <= 0 and o.failed then o.summary else e.error end,
        finished_at = case when e.status = 'running' and (d.over_budget or e.pending_messages + d.delta <= 0)
                           then ${now.toISOString()}::timestamptz else e.finished_at end,
        outcome = case when e.status <> 'running' then e.outcome
                       when d.over_budget then 'failed'
                       when e.pending_messages + d.delta <= 0 then o.outcome else e.outcome end,
        first_errors = case when e.status <> 'running' then e.first_errors
                            when d.over_budget or e.pending_messages + d.delta <= 0
                            then o.first_errors else e.first_errors end
      from locked l join deltas d on d.execution_id = l.id left join outcomes o on o.execution_id = d.execution_id
      where e.id = l.id
      returning e.id, e.status
    )
    select 'applied' as kind, message_id as id from applied
    union all select 'inserted', message_id from inserted
    union all select 'finished', c.id from counted c join before b on b.id = c.id
              where b.status = 'running' and c.status in ('completed', 'failed')`;
}

/**
 * Writes the outcome of an ended execution that has none yet (drained by a concurrent finish
 * its statement's snapshot missed), from the lineage as committed; its row, or undefined.
 */
async function settleOutcome(
  db: Kysely<DatabaseSchema>,
  executionId: string,
): Promise<ExecutionRow | undefined> {
  const result = await sql<ExecutionRow>`
    update executions as e set outcome = o.outcome, first_errors = o.first_errors
    from (${executionOutcomes(lineageAsWritten(sql`select ${executionId}::uuid`))}) o
    where e.id = o.execution_id and e.status <> 'running' and e.outcome is null
    returning e.*`.execute(db);
  return result.rows[0];
}

async function finishInTransaction(
  db: Kysely<DatabaseSchema>,
  requests: readonly FinishRequest[],
): Promise<FinishOutcome[]> {
  return db.transaction().execute(async (transaction) => {
    const updated = await sql<{ message_id: string }>`
      update lineage as l set
        status = v.status, error = v.error, attempts = v.attempts, envelope = null,
        started_at = v.started_at, finished_at = v.finished_at,
        duration_ms = extract(epoch from (v.finished_at - v.started_at)) * 1000
      from unnest(
        ${uuidArray(requests.map((request) => request.message.message_id))}::uuid[],
        ${textArray(requests.map((request) => request.status))}::text[],
        ${textArray(requests.map((request) => request.error))}::text[],
        ${int4Array(requests.map((request) => request.message.attempts))}::int[],
        ${timestamptzArray(requests.map((request) => request.message.started_at))}::timestamptz[],
        ${timestamptzArray(requests.map((request) => request.message.finished_at))}::timestamptz[]
      ) as v(message_id, status, error, attempts, started_at, finished_at)
      where l.message_id = v.message_id and l.status = 'queued'
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
    if (deltas.size > 0) {
      const ids = uuidArray([...deltas.keys()]);
      const draining = sql`select id from executions
                           where id = any(${ids}::uuid[]) and status = 'running' and pending_messages <= 0`;
      const finished = await sql<ExecutionRow>`
        update executions as e set
          status = case when o.failed then 'failed' else 'completed' end,
          error = case when o.failed then o.summary else e.error end,
          outcome = o.outcome, first_errors = o.first_errors,
          finished_at = ${now.toISOString()}::timestamptz, updated_at = ${now.toISOString()}::timestamptz
        from (${executionOutcomes(lineageAsWritten(draining))}) o
        where e.id = o.execution_id and e.status = 'running' and e.pending_messages <= 0
        returning e.*`
        .execute(transaction)
        .then((result) => result.rows);
      for (const row of finished) {
        const outcome = outcomes[lastApplied.get(row.id) as number];
        if (outcome) outcome.finishedExecution = row;
      }
    }
    return outcomes;
  });
}
