import type { Migration } from './migration.js';

/**
 * The message budget of an execution (issue 30): how many messages it may create, fixed when it
 * starts (the `max_messages_per_execution` setting, or the config's lower value), and how many it
 * has created. The count moves in the statement that already inserts the messages and moves the
 * pending counter, so it costs no extra write, and it lives in the database so that every
 * instance working on the execution counts against the same budget. Executions started before
 * this migration have no budget (null).
 */
export const executionMessageBudget: Migration = {
  id: 16,
  name: 'execution-message-budget',
  statements: [
    'alter table executions add column message_budget integer',
    'alter table executions add column created_messages integer not null default 0',
  ],
};
