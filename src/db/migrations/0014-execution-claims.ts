import type { Migration } from './migration.js';

/**
 * Keys an execution has claimed, each once (issue 18: web_crawler's `follow_links` fetches a
 * URL at most once per execution, whichever instance processes the message that found it).
 * Gone with the execution.
 */
export const executionClaims: Migration = {
  id: 14,
  name: 'execution-claims',
  statements: [
    `create table execution_claims (
       execution_id uuid not null references executions (id) on delete cascade,
       scope text not null,
       claim_key text not null,
       primary key (execution_id, scope, claim_key)
     )`,
  ],
};
