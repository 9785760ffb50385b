/**
 * How an execution ends once no message is pending (docs/engine.md, "How an execution ends"):
 * `failed` when its init message failed, or when messages failed and none past the init
 * message completed or was skipped (every message of the work failed); `completed` otherwise,
 * partial failures included. Decided in SQL, in the statement that drains the execution, so
 * no reader ever sees a failed run as completed. An execution also fails, whatever is pending,
 * once it would create more messages than its budget (message-budget.ts).
 *
 * The same statement decides Weir's own `outcome` (docs/engine.md, "Outcomes"), which tells a
 * reader whether the run did its work, where the spec's `completed` only says it drained:
 * - a message "reached the end" when it completed at a stage that emitted nothing in this
 *   execution (its outputs left the pipeline: a sink or an index), and it is not the init
 *   message (the source step's job is to find work, not to be it);
 * - a skip is "unexpected" when the engine, not the step, decided it: a stopped route or an
 *   ended execution (ENGINE_SKIP_REASONS). A step's own skip (a page answering 404, robots.txt,
 *   unchanged since the last run) is the step saying there was nothing to do.
 * `failed` (the status is failed, or messages failed and nothing reached the end), `empty`
 * (nothing failed and nothing reached the end), `partial` (something reached the end, and
 * messages failed or were skipped unexpectedly), `succeeded` otherwise.
 */
import { type RawBuilder, sql } from 'kysely';

/** Errors quoted in the summary a failed execution keeps in `error`. */
export const QUOTED_ERRORS = 3;

/** Failed and skipped messages quoted in an outcome's `first_errors`. */
export const OUTCOME_ERRORS = 5;

/** The skip reason of a message left on a route stopped through the pipelines API. */
export const ROUTE_STOPPED = 'route stopped through the pipelines API';

/** Skips the engine decides (the step never judged the message): unexpected for an outcome. */
export const ENGINE_SKIP_REASONS = [ROUTE_STOPPED, 'execution cancelled', 'execution failed'] as const;

export const OUTCOMES = ['succeeded', 'partial', 'failed', 'empty'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** A failed or skipped message as an outcome quotes it: the reason is its lineage error. */
export interface OutcomeError {
  message_id: string;
  route_id: string;
  stage: string;
  status: 'failed' | 'skipped';
  error: string | null;
}

export interface ExecutionOutcome {
  execution_id: string;
  failed: boolean;
  /** `<failed> of <total> messages failed; first: <route>/<stage>: <error> | ...` */
  summary: string;
  outcome: Outcome;
  /** Failed messages first, then skipped ones (none for `succeeded`), earliest first. */
  first_errors: OutcomeError[];
}

/**
 * The lineage rows of `executionIds` as the calling statement leaves them. A statement does
 * not see its own updates, so the one-statement finish passes the statuses and errors it is
 * writing (`requests`: message_id, status, error) to be laid over the rows still queued.
 */
export function lineageAsWritten(
  executionIds: RawBuilder<unknown>,
  requests?: RawBuilder<unknown>,
): RawBuilder<unknown> {
  if (!requests)
    return sql`(select execution_id, message_id, route_id, stage, emitted_by, queued_at, status, error
                from lineage where execution_id in (${executionIds}))`;
  return sql`(select l.execution_id, l.message_id, l.route_id, l.stage, l.emitted_by, l.queued_at,
                     case when l.status = 'queued' and v.message_id is not null then v.status else l.status end as status,
                     case when l.status = 'queued' and v.message_id is not null then v.error else l.error end as error
              from lineage l left join ${requests} v on v.message_id = l.message_id
              where l.execution_id in (${executionIds}))`;
}

/**
 * One row per execution of `rows` (from lineageAsWritten): whether its status is failed and
 * why, and its outcome with the messages that explain it.
 *
 * `rows` is read once for what every execution needs (counts, whether a message reached the
 * end), grouped by stage and emitter: a handful of groups, so the stages that emitted come from
 * the groups instead of a second read of every row (0.34 s of PGlite's thread per 100,000
 * messages, issue 35). The messages quoted (the summary's failures, `first_errors`) are read
 * again only for an execution that has failed or skipped messages, and then only those.
 */
export function executionOutcomes(rows: RawBuilder<unknown>): RawBuilder<ExecutionOutcome> {
  const engineSkips = sql.join(ENGINE_SKIP_REASONS.map((reason) => sql`${reason}::text`));
  // The failed or skipped rows of g's execution in `order`, the first `limit`: `select` of them.
  const quoted = (
    select: RawBuilder<unknown>,
    statuses: RawBuilder<unknown>,
    order: RawBuilder<unknown>,
    limit: number,
  ) =>
    sql`(select ${select} from (select q.* from ${rows} q
           where q.execution_id = g.execution_id and q.status in (${statuses})
           order by ${order} limit ${sql.lit(limit)}) q)`;
  return sql<ExecutionOutcome>`
    with s as (
      select r.execution_id, r.stage, r.emitted_by, count(*) as messages,
             count(*) filter (where r.status = 'failed') as failed_messages,
             count(*) filter (where r.status = 'skipped') as skipped_messages,
             count(*) filter (where r.status = 'skipped' and r.error in (${engineSkips})) as unexpected_skips,
             bool_or(r.emitted_by = 'init' and r.status = 'failed') as init_failed,
             bool_or(r.emitted_by <> 'init' and r.status in ('completed', 'skipped')) as worked,
             bool_or(r.status = 'completed' and r.emitted_by <> 'init') as completed
      from ${rows} r
      group by r.execution_id, r.stage, r.emitted_by
    ), g as (
      select s.execution_id, sum(s.messages)::bigint as messages, sum(s.failed_messages)::bigint as failed_messages,
             sum(s.skipped_messages)::bigint as skipped_messages, sum(s.unexpected_skips)::bigint as unexpected_skips,
             coalesce(bool_or(s.init_failed), false)
               or (sum(s.failed_messages) > 0 and not coalesce(bool_or(s.worked), false)) as failed,
             -- Reached the end: completed at a stage that emitted no message in this execution.
             coalesce(bool_or(s.completed and emitter.stage is null), false) as reached
      from s left join (select distinct execution_id, emitted_by as stage from s) emitter
        on emitter.execution_id = s.execution_id and emitter.stage = s.stage
      group by s.execution_id
    )
    select g.execution_id, g.failed,
           g.failed_messages::text || ' of ' || g.messages::text || ' messages failed; first: '
             || case when g.failed_messages = 0 then '-' else ${quoted(
               sql`array_to_string(array_agg(q.route_id || '/' || q.stage || ': ' || coalesce(q.error, 'failed')
                                             order by q.queued_at, q.message_id), ' | ')`,
               sql`'failed'`,
               sql`q.queued_at, q.message_id`,
               QUOTED_ERRORS,
             )} end as summary,
           case when g.failed then 'failed'
                when not g.reached then case when g.failed_messages > 0 then 'failed' else 'empty' end
                when g.failed_messages > 0 or g.unexpected_skips > 0 then 'partial'
                else 'succeeded' end as outcome,
           case when (not g.failed and g.reached and g.failed_messages = 0 and g.unexpected_skips = 0)
                     or g.failed_messages + g.skipped_messages = 0
                then '[]'::jsonb
                else ${quoted(
                  sql`coalesce(to_jsonb(array_agg(jsonb_build_object('message_id', q.message_id, 'route_id', q.route_id,
                                                            'stage', q.stage, 'status', q.status, 'error', q.error)
                                         order by q.status <> 'failed', q.queued_at, q.message_id)), '[]'::jsonb)`,
                  sql`'failed', 'skipped'`,
                  sql`q.status <> 'failed', q.queued_at, q.message_id`,
                  OUTCOME_ERRORS,
                )} end as first_errors
    from g`;
}
