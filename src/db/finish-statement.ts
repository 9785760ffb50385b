/**
 * The one-statement finish of a batch of messages (message-finishing.ts), without the outcome:
 * messages move from queued to their status, the outputs of the applied ones are queued, the
 * pending counters move, and an execution past its message budget fails. An execution it
 * drains stays `running` with nothing pending, and is named in the answer: its status and
 * outcome are decided by the next statement (endDrained), from the lineage as committed.
 *
 * Why two statements: deciding the outcome in this statement cost about 12 ms of planning on
 * every finish (docs/benchmarks.md, "Engine"), although an execution drains once. Leaving it
 * `running` until the next statement keeps the order readers rely on: an execution never shows
 * `completed` before `failed`, and its status change (and the outbox event a trigger writes
 * for it, migration 0012) happens once, with its outcome. A process that dies between the two
 * leaves it running with nothing pending; the orchestrator's poll ends it (orchestrator.ts).
 *
 * The statement carries only the parts a batch needs, each a separate plan: outputs, failed
 * events, and the id-ordered lock that only a batch spanning several executions needs.
 */
import { type RawBuilder, sql } from 'kysely';
import { byteaArray, int4Array, textArray, timestamptzArray, uuidArray } from './array-parameter.js';
import type { FinishedMessage, FinishRequest, NewMessage } from './execution-types.js';
import { budgetExceededError } from './message-budget.js';
import { outboxFailures } from './webhook-outbox.js';

/**
 * A row of the finish's answer: a message of the batch `unapplied` (not queued any more: a
 * duplicate), an output of an applied message `uninserted` (already queued, or its execution
 * refused it), an execution `ended` (failed past its budget) or `drained` (running, nothing
 * pending). The exceptions rather than every message applied and output inserted: usually
 * there are none, and 1,000 ids a batch cost more to answer (PGlite turns each into a string,
 * the thread boundary copies it, this thread puts it in a set) than the anti-join to find them.
 */
export interface FinishRow {
  kind: 'unapplied' | 'uninserted' | 'ended' | 'drained';
  id: string;
}

/** The messages of `requests` the finish did not apply, as `unapplied` rows. */
const unapplied = sql`select 'unapplied' as kind, v.message_id as id from requests v
    where not exists (select 1 from applied a where a.message_id = v.message_id)`;

/**
 * The update of the queued lineage rows of `requests` (a relation of message_id, status,
 * error, attempts, started_at, finished_at) to their status, as `l`.
 * The rows are looked up by primary key from an array the planner cannot count (an InitPlan's):
 * joined on message_id alone, Postgres read and hashed every queued row of the table for each
 * batch (a lineage table without statistics, as PGlite keeps it, looks small; with statistics,
 * random_page_cost 4 still prices 1,000 key lookups above a scan of 100,000 rows), 138 ms
 * against 14 ms a batch of 1,000 at 100,000 queued rows on PGlite.
 */
export function finishLineage(requests: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`update lineage as l set
        status = v.status, error = v.error, attempts = v.attempts, envelope = null,
        started_at = v.started_at, finished_at = v.finished_at,
        duration_ms = extract(epoch from (v.finished_at - v.started_at)) * 1000
      from ${requests} v
      where l.message_id = any(array(select message_id from ${requests}))
        and l.message_id = v.message_id and l.status = 'queued'`;
}

/** The finish of `unique` (no message twice) at `now`, as one statement. */
export function finishStatement(unique: readonly FinishRequest[], now: Date) {
  const column = <T>(pick: (request: FinishRequest) => T) => unique.map(pick);
  const withFailures = unique.some((request) => request.failedEvent);
  const requests = sql`requests as (
      select * from unnest(
        ${uuidArray(column((request) => request.message.message_id))}::uuid[],
        ${textArray(column((request) => request.status))}::text[],
        ${textArray(column((request) => request.error))}::text[],
        ${int4Array(column((request) => request.message.attempts))}::int[],
        ${timestamptzArray(column((request) => request.message.started_at))}::timestamptz[],
        ${timestamptzArray(column((request) => request.message.finished_at))}::timestamptz[]
        ${withFailures ? sql`, ${textArray(column((request) => (request.failedEvent ? JSON.stringify(request.failedEvent) : null)))}::text[]` : sql``}
      ) as v(message_id, status, error, attempts, started_at, finished_at ${withFailures ? sql`, failed_event` : sql``})
    ), applied as (
      ${finishLineage(sql`requests`)}
      returning l.message_id, l.execution_id
    )${
      withFailures
        ? sql`, failed_events as (
      ${outboxFailures(sql`select v.message_id, v.failed_event, v.finished_at from requests v join applied a on a.message_id = v.message_id`)}
    )`
        : sql``
    }`;
  const at = now.toISOString();
  const executions = new Set(unique.map((request) => request.message.execution_id));
  if (unique.every((request) => request.outputs.length === 0))
    return withoutOutputs(requests, at, executions.size > 1);
  return withOutputs(requests, unique, at);
}

/**
 * A batch that queues nothing (a sink's, a failure's): the counters only go down, so no
 * execution can pass its budget and no status changes here.
 */
function withoutOutputs(requests: ReturnType<typeof sql>, at: string, severalExecutions: boolean) {
  // Two instances finishing batches that span the same executions lock their rows in id order,
  // so they wait for each other instead of deadlocking; one execution's row needs no order.
  const counted = severalExecutions
    ? sql`locked as materialized (
        select id from executions where id in (select execution_id from deltas) order by id for update
      ), counted as (
        update executions as e set pending_messages = e.pending_messages + d.delta, updated_at = ${at}::timestamptz
        from locked l join deltas d on d.execution_id = l.id
        where e.id = l.id
        returning e.id, e.status, e.pending_messages
      )`
    : sql`counted as (
        update executions as e set pending_messages = e.pending_messages + d.delta, updated_at = ${at}::timestamptz
        from deltas d where e.id = d.execution_id
        returning e.id, e.status, e.pending_messages
      )`;
  return sql<FinishRow>`
    with ${requests}, deltas as (
      select execution_id, -count(*)::int as delta from applied group by execution_id
    ), ${counted}
    ${unapplied}
    union all select 'drained', id from counted where status = 'running' and pending_messages <= 0`;
}

/** A batch that queues outputs: their rows, the created counters and the message budget. */
function withOutputs(requests: ReturnType<typeof sql>, unique: readonly FinishRequest[], at: string) {
  // Outputs are queued when the batch is written: the latest finish of their execution's messages.
  const queuedAt = new Map<string, Date>();
  for (const { message } of unique) {
    const latest = queuedAt.get(message.execution_id);
    if (!latest || message.finished_at > latest) queuedAt.set(message.execution_id, message.finished_at);
  }
  const outputs: Array<{ parent: FinishedMessage; output: NewMessage }> = [];
  for (const request of unique)
    for (const output of request.outputs) outputs.push({ parent: request.message, output });
  const outputColumn = <T>(pick: (entry: { parent: FinishedMessage; output: NewMessage }) => T) =>
    outputs.map(pick);
  return sql<FinishRow>`
    with ${requests}, outputs as (
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
    ), locked as materialized (
      -- The execution rows locked in id order before any is updated (no deadlock between
      -- instances), with their status as locked: the latest, which the update starts from.
      select id, status from executions where id in (select execution_id from deltas) order by id for update
    ), counted as (
      -- One past its message budget fails, whatever is pending, with its outcome: the budget
      -- says why. One drained stays running for endDrained.
      update executions as e set
        pending_messages = e.pending_messages + d.delta,
        created_messages = e.created_messages + d.created,
        updated_at = ${at}::timestamptz,
        status = case when e.status = 'running' and d.over_budget then 'failed' else e.status end,
        error = case when e.status = 'running' and d.over_budget
                     then ${budgetExceededError(sql`e.id`, sql`e.message_budget`)} else e.error end,
        finished_at = case when e.status = 'running' and d.over_budget then ${at}::timestamptz else e.finished_at end,
        outcome = case when e.status = 'running' and d.over_budget then 'failed' else e.outcome end,
        first_errors = case when e.status = 'running' and d.over_budget then '[]'::jsonb else e.first_errors end
      from locked l join deltas d on d.execution_id = l.id
      where e.id = l.id
      returning e.id, e.status, e.pending_messages, l.status as was
    )
    ${unapplied}
    union all select 'uninserted', o.message_id from outputs o join applied a on a.message_id = o.parent_id
              where not exists (select 1 from inserted i where i.message_id = o.message_id)
    union all select case when c.status = 'running' then 'drained' else 'ended' end, c.id from counted c
              where c.was = 'running' and (c.status <> 'running' or c.pending_messages <= 0)`;
}
