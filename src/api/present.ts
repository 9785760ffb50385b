/** Database rows -> API records (timestamps as ISO strings). */
import type { Kysely } from 'kysely';
import { type ExecutionSummary, executionSummaries, NO_MESSAGES } from '../db/execution-summaries.js';
import type { ExecutionRow, LineageRow } from '../db/execution-types.js';
import type { DatabaseSchema } from '../db/schema.js';

const iso = (value: Date | string) => new Date(value).toISOString();
const isoOrNull = (value: Date | string | null) => (value === null ? null : iso(value));

/** The execution answer: the spec's record, then Weir's names and counts (execution-summaries.ts). */
export function presentExecution(row: ExecutionRow, summary?: ExecutionSummary) {
  return {
    id: row.id,
    config_id: row.config_id,
    config_version: row.config_version,
    config_hash: row.config_hash,
    tag: row.tag,
    status: row.status,
    skip_init_message: row.skip_init_message,
    init_payload: row.init_payload,
    pending_messages: row.pending_messages,
    error: row.error,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    finished_at: isoOrNull(row.finished_at),
    outcome: row.outcome,
    first_errors: row.first_errors ?? [],
    config_name: summary?.config_name ?? null,
    message_counts: summary?.message_counts ?? NO_MESSAGES,
  };
}

/** Executions as answered, each with its config's name and message counts (one query). */
export async function presentNamedExecutions(
  db: Kysely<DatabaseSchema> | undefined,
  rows: readonly ExecutionRow[],
) {
  const summaries = db
    ? await executionSummaries(
        db,
        rows.map((row) => row.id),
      )
    : new Map();
  return rows.map((row) => presentExecution(row, summaries.get(row.id)));
}

export function presentLineage(row: Omit<LineageRow, 'envelope'>) {
  return {
    ...row,
    queued_at: iso(row.queued_at),
    started_at: isoOrNull(row.started_at),
    finished_at: isoOrNull(row.finished_at),
  };
}
