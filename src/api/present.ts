/** Database rows -> API records (timestamps as ISO strings). */
import type { ExecutionRow, LineageRow } from '../db/execution-types.js';

const iso = (value: Date | string) => new Date(value).toISOString();
const isoOrNull = (value: Date | string | null) => (value === null ? null : iso(value));

export function presentExecution(row: ExecutionRow) {
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
  };
}

export function presentLineage(row: Omit<LineageRow, 'envelope'>) {
  return {
    ...row,
    queued_at: iso(row.queued_at),
    started_at: isoOrNull(row.started_at),
    finished_at: isoOrNull(row.finished_at),
  };
}
