import type { Migration } from './migration.js';

/**
 * Weir's own outcome of an ended execution (issue 31; docs/engine.md, "Outcomes"): `succeeded`,
 * `partial`, `failed` or `empty`, with the messages that explain it. Written by the statement
 * that ends the execution (execution-outcome.ts decides it), so every instance reads the same
 * answer and no list recounts lineage. Executions that completed or were cancelled before this
 * migration keep null; failed ones become `failed`.
 * The execution events of the webhook outbox carry both (the function of migration 12 with two
 * more fields), as the engine's events on the bus do.
 */
export const executionOutcome: Migration = {
  id: 17,
  name: 'execution-outcome',
  statements: [
    'alter table executions add column outcome text',
    'alter table executions add column first_errors jsonb',
    // A failed execution's outcome is failed, whenever it ended; a completed one before this
    // migration is not judged again (its lineage may be long): it keeps null.
    `update executions set outcome = 'failed', first_errors = '[]'::jsonb where status = 'failed'`,
    `create or replace function record_execution_event() returns trigger language plpgsql as $$
     declare
       happened_at timestamptz := coalesce(new.finished_at, new.updated_at);
       event_type text := 'execution.' ||
         case new.status when 'running' then 'started' else new.status end;
     begin
       if exists (select 1 from webhook_subscriptions) then
         insert into webhook_event_outbox (event_type, subject_id, event, created_at)
         values (event_type, new.id::text, jsonb_build_object(
                   'type', event_type,
                   'execution_id', new.id,
                   'config_id', new.config_id,
                   'status', new.status,
                   'timestamp', to_char(happened_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                   'error', new.error,
                   'outcome', new.outcome,
                   'first_errors', coalesce(new.first_errors, '[]'::jsonb)),
                 happened_at)
         on conflict do nothing;
       end if;
       return null;
     end $$`,
  ],
};
