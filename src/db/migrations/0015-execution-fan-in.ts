import type { Migration } from './migration.js';

/**
 * Fan-in within an execution (issue 19: conv_filtered_collector waits for every conversation
 * of a package, kept or dropped). One row per arrival, keyed by (execution, group, item), so a
 * redelivered message is not counted twice; one completion row per group, whose primary key
 * lets exactly one arrival complete it, whichever instance processed it. Gone with the
 * execution.
 */
export const executionFanIn: Migration = {
  id: 15,
  name: 'execution-fan-in',
  statements: [
    `create table execution_fan_in_arrivals (
       execution_id uuid not null references executions (id) on delete cascade,
       group_key text not null,
       item_key text not null,
       value jsonb not null,
       primary key (execution_id, group_key, item_key)
     )`,
    `create table execution_fan_in_completions (
       execution_id uuid not null references executions (id) on delete cascade,
       group_key text not null,
       completed_by text not null,
       primary key (execution_id, group_key)
     )`,
  ],
};
