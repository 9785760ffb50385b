import type { Migration } from './migration.js';

/**
 * Fan-in within an execution (issue 19: conv_filtered_collector waits for every conversation
 * of a package, kept or dropped). One row per arrival, keyed by (execution, group, item), so a
 * redelivered message is not counted twice; one row per group counting the arrivals, bumped in
 * the same statement that inserts a new arrival (the row lock orders concurrent arrivals, so
 * exactly one sees the count reach the total, whichever instance processed it), and naming
 * the arrival that completed the group. Counting with a counter rather than `count(*)` keeps
 * each arrival O(1): a 50,000-conversation package would otherwise scan its arrivals 50,000
 * times. Gone with the execution.
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
    `create table execution_fan_in_groups (
       execution_id uuid not null references executions (id) on delete cascade,
       group_key text not null,
       arrived integer not null,
       completed_by text,
       primary key (execution_id, group_key)
     )`,
  ],
};
