import type { Migration } from './migration.js';

/**
 * Lineage without the foreign key to its execution. Its check ran once per message written (a
 * trigger querying and key-share-locking the execution row for every lineage row: about a
 * quarter of the cost of the hottest insert on PGlite, measured in bench:engine). Nothing
 * deletes executions, so the cascade never ran; every lineage row is written by the
 * repository for an execution it has just created or read (createExecution, finishMessages of
 * that execution's messages, addMessages under a lock on the running execution).
 */
export const lineageWrites: Migration = {
  id: 9,
  name: 'lineage-writes',
  statements: ['alter table lineage drop constraint if exists lineage_execution_id_fkey'],
};
