/**
 * How an execution ends once no message is pending (docs/engine.md, "How an execution ends"):
 * `failed` when its init message failed, or when messages failed and none past the init
 * message completed or was skipped (every message of the work failed); `completed` otherwise,
 * partial failures included. Decided in SQL, in the statement that drains the execution, so
 * no reader ever sees a failed run as completed. An execution also fails, whatever is pending,
 * once it would create more messages than its budget (message-budget.ts).
 */
import { type RawBuilder, sql } from 'kysely';

/** Errors quoted in the summary a failed execution keeps in `error`. */
export const QUOTED_ERRORS = 3;

export interface ExecutionOutcome {
  execution_id: string;
  failed: boolean;
  /** `<failed> of <total> messages failed; first: <route>/<stage>: <error> | ...` */
  summary: string;
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

/** One row per execution of `rows` (from lineageAsWritten): whether it failed, and why. */
export function executionOutcomes(rows: RawBuilder<unknown>): RawBuilder<ExecutionOutcome> {
  return sql<ExecutionOutcome>`
    select r.execution_id,
           coalesce(bool_or(r.emitted_by = 'init' and r.status = 'failed'), false)
             or (coalesce(bool_or(r.status = 'failed'), false)
                 and not coalesce(bool_or(r.emitted_by <> 'init' and r.status in ('completed', 'skipped')), false))
             as failed,
           (count(*) filter (where r.status = 'failed'))::text || ' of ' || count(*)::text
             || ' messages failed; first: '
             || coalesce(array_to_string((array_agg(r.route_id || '/' || r.stage || ': ' || coalesce(r.error, 'failed')
                                                    order by r.queued_at, r.message_id)
                                          filter (where r.status = 'failed'))[1:${sql.lit(QUOTED_ERRORS)}], ' | '), '-')
             as summary
    from ${rows} r
    group by r.execution_id`;
}
