import type { Migration } from './migration.js';

/**
 * What an incremental source adapter knew after a run (issue 18): per pipeline config, scope
 * (a wiki space, a drive) and item (a page id, a delta link), a small JSON value and the
 * execution that wrote it. A value counts as known only once that execution completed, so a
 * run that failed or was cancelled leaves the next one to fetch the same items again.
 * Deleting a config deletes its state.
 */
export const syncState: Migration = {
  id: 13,
  name: 'sync-state',
  statements: [
    `create table adapter_sync_state (
       config_id uuid not null references pipeline_configs (id) on delete cascade,
       scope text not null,
       item_key text not null,
       value jsonb not null,
       execution_id uuid not null,
       updated_at timestamptz not null,
       primary key (config_id, scope, item_key)
     )`,
  ],
};
