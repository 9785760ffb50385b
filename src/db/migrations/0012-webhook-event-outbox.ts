import type { Migration } from './migration.js';

/**
 * A transactional outbox for the events that follow a database state change (issue 17 item
 * 10): an execution starting or ending, a message failing. The row is written in the
 * transaction that makes the change, and only while some webhook subscription exists (the
 * events are for webhooks alone), so a crash between the commit and the dispatcher recording
 * the event no longer loses it.
 * - Execution events come from triggers on executions, so every path that changes an
 *   execution's status (start, the batched finish in both its forms, cancel, failure) writes
 *   one.
 * - lineage.failed rows are written by the finish statements (executions-repository.ts),
 *   which have the adapter name the lineage table does not keep.
 * A row is keyed by what happened: (event type, execution id or message id), each of which
 * happens once. The dispatcher that hears the event on its bus records it and deletes the row
 * in the same statement. A row left behind (its instance died before recording it) is recorded
 * by any dispatcher's sweep once it is old enough, and kept, marked `recorded`, for an hour:
 * a dispatcher that hears the event that late finds the mark and does not record it again.
 * An event heard on the bus that has no row (none was needed: no subscription existed when it
 * happened) is recorded as before.
 * Also: one delivery per (event, subscription), so a recording retried after a write that
 * seemed to fail but landed cannot deliver an event twice.
 */
export const webhookEventOutbox: Migration = {
  id: 12,
  name: 'webhook-event-outbox',
  statements: [
    `create table webhook_event_outbox (
       event_type text not null,
       subject_id text not null,
       event jsonb not null,
       created_at timestamptz not null,
       recorded boolean not null default false,
       primary key (event_type, subject_id)
     )`,
    'create index webhook_event_outbox_age on webhook_event_outbox (recorded, created_at)',
    // The event as the engine raises it on its bus (src/events/event-bus.ts: ExecutionEvent),
    // with the time of the change in JavaScript's ISO form.
    `create function record_execution_event() returns trigger language plpgsql as $$
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
                   'error', new.error),
                 happened_at)
         on conflict do nothing;
       end if;
       return null;
     end $$`,
    `create trigger executions_started_outbox after insert on executions
       for each row execute function record_execution_event()`,
    // Only a change of status: the batched finish sets status on every counter update.
    `create trigger executions_ended_outbox after update of status on executions
       for each row when (old.status is distinct from new.status) execute function record_execution_event()`,
    'create unique index webhook_deliveries_event_webhook on webhook_deliveries (event_id, webhook_id)',
  ],
};
