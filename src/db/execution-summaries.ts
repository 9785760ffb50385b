/**
 * What names an execution to a reader (issue 31, "a console that names things"): its config's
 * name and its messages by status, for a page of executions in one statement. Weir's own
 * fields of the execution answer; the spec's record is unchanged.
 */
import { type Kysely, sql } from 'kysely';
import { uuidArray } from './array-parameter.js';
import type { DatabaseSchema } from './schema.js';

export interface MessageCounts {
  total: number;
  completed: number;
  failed: number;
  skipped: number;
  /** Queued or in a handler. */
  queued: number;
}

export interface ExecutionSummary {
  /** The config's current name; null when the config row is gone. */
  config_name: string | null;
  message_counts: MessageCounts;
}

export const NO_MESSAGES: MessageCounts = { total: 0, completed: 0, failed: 0, skipped: 0, queued: 0 };

/**
 * Per execution id: its config's name and its lineage counted by status. The counts read the
 * lineage through its execution index, one execution at a time (a lateral join), so a page of
 * executions costs what their messages cost, never a scan of the whole lineage.
 */
export async function executionSummaries(
  db: Kysely<DatabaseSchema>,
  ids: readonly string[],
): Promise<Map<string, ExecutionSummary>> {
  if (ids.length === 0) return new Map();
  const result = await sql<{ id: string; config_name: string | null } & MessageCounts>`
    select e.id, c.name as config_name, l.total, l.completed, l.failed, l.skipped, l.queued
    from executions e
    left join pipeline_configs c on c.id = e.config_id
    cross join lateral (
      select count(*)::int as total,
             (count(*) filter (where status = 'completed'))::int as completed,
             (count(*) filter (where status = 'failed'))::int as failed,
             (count(*) filter (where status = 'skipped'))::int as skipped,
             (count(*) filter (where status = 'queued'))::int as queued
      from lineage where execution_id = e.id
    ) l
    where e.id = any(${uuidArray([...ids])}::uuid[])`.execute(db);
  return new Map(
    result.rows.map((row) => [
      row.id,
      {
        config_name: row.config_name,
        message_counts: {
          total: row.total,
          completed: row.completed,
          failed: row.failed,
          skipped: row.skipped,
          queued: row.queued,
        },
      },
    ]),
  );
}
