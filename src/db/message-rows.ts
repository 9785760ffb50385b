/**
 * Queued messages as lineage rows: the unnest of one array per column (sent to PGlite in
 * binary), and their insert in chunks. Used when an execution is created, when messages are
 * added to it, and when a finish inserts its outputs in a transaction.
 */
import { sql, type Transaction } from 'kysely';
import { byteaArray, textArray, uuidArray } from './array-parameter.js';
import type { NewMessage } from './execution-types.js';
import type { DatabaseSchema } from './schema.js';

const INSERT_CHUNK = 1000;

/** Queued messages as rows, one array per column (unnest), sent to PGlite in binary. */
export function messageRows(messages: readonly NewMessage[]) {
  return sql`unnest(
        ${uuidArray(messages.map((message) => message.message_id))}::uuid[],
        ${uuidArray(messages.map((message) => message.correlation_id))}::uuid[],
        ${textArray(messages.map((message) => message.route_id))}::text[],
        ${textArray(messages.map((message) => message.stage))}::text[],
        ${textArray(messages.map((message) => message.emitted_by))}::text[],
        ${byteaArray(messages.map((message) => message.envelope))}::bytea[]
      ) as v(message_id, correlation_id, route_id, stage, emitted_by, envelope)`;
}

/** Inserts `messages` queued in `executionId`; the ids inserted (a message already there is skipped). */
export async function insertMessages(
  transaction: Transaction<DatabaseSchema>,
  executionId: string,
  messages: readonly NewMessage[],
  now: Date,
): Promise<string[]> {
  const inserted: string[] = [];
  for (let start = 0; start < messages.length; start += INSERT_CHUNK) {
    const chunk = messages.slice(start, start + INSERT_CHUNK);
    // Arrays bound once per column instead of one parameter per value: far fewer parameters
    // to serialise for large fan-outs.
    const result = await sql<{ message_id: string }>`
      insert into lineage (message_id, correlation_id, execution_id, route_id, stage, emitted_by, status, envelope, queued_at)
      select v.message_id, v.correlation_id, ${executionId}::uuid, v.route_id, v.stage, v.emitted_by, 'queued',
             v.envelope, ${now.toISOString()}::timestamptz
      from ${messageRows(chunk)}
      on conflict (message_id) do nothing
      returning message_id`.execute(transaction);
    for (const row of result.rows) inserted.push(row.message_id);
  }
  return inserted;
}
