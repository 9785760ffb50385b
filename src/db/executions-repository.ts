/**
 * Executions and their lineage (tables executions, lineage). Every state change of a message
 * happens atomically with the execution's pending counter (one statement, or one transaction),
 * so completion detection is exact with fan-out and with several workers: the execution
 * completes in the write that brings its pending count to zero, and in no other.
 *
 * Idempotent by construction: output message ids derive from the input id, outputs are
 * inserted with ON CONFLICT DO NOTHING, and a message is finished only from `queued`. A
 * redelivered or duplicated message therefore changes nothing the second time.
 *
 * The writes live by responsibility: creating executions and adding messages
 * (execution-creation.ts), finishing messages (message-finishing.ts), ending executions
 * (execution-ending.ts); the reads in execution-queries.ts.
 */
import type { Kysely } from 'kysely';
import { addMessages, createExecution } from './execution-creation.js';
import { endExecution } from './execution-ending.js';
import { createExecutionQueries } from './execution-queries.js';
import type {
  AddOutcome,
  ExecutionRow,
  FinishOutcome,
  FinishRequest,
  NewExecution,
  NewMessage,
} from './execution-types.js';
import { endDrained, finishMessages } from './message-finishing.js';
import type { DatabaseSchema, ExecutionStatus } from './schema.js';

export function createExecutionsRepository(db: Kysely<DatabaseSchema>) {
  return {
    ...createExecutionQueries(db),
    /** Creates the execution and, unless skipped, its queued init message, atomically. */
    createExecution: (execution: NewExecution): Promise<ExecutionRow> => createExecution(db, execution),

    /**
     * Adds queued messages to a running execution (replay; early outputs of a large fan-out):
     * rows, pending and created counters in one transaction. Inserts nothing when the execution
     * is not running, or when the messages would pass its budget (it then fails).
     */
    addMessages: (executionId: string, messages: readonly NewMessage[], now: Date): Promise<AddOutcome> =>
      addMessages(db, executionId, messages, now),

    /** Finishes a batch of messages atomically (message-finishing.ts). */
    finishMessages: (requests: readonly FinishRequest[]): Promise<FinishOutcome[]> =>
      finishMessages(db, requests),

    /**
     * Ends the executions among `ids` that are running with nothing pending, with their outcome;
     * their rows (message-finishing.ts: the second statement of a finish that drained them).
     */
    endDrained: (ids: readonly string[], now: Date): Promise<ExecutionRow[]> => endDrained(db, ids, now),

    /** running -> `status`; undefined when the execution was not running (execution-ending.ts). */
    endExecution: (
      id: string,
      status: Exclude<ExecutionStatus, 'running'>,
      now: Date,
      error: string | null = null,
    ) => endExecution(db, id, status, now, error),
  };
}

export type ExecutionsRepository = ReturnType<typeof createExecutionsRepository>;
