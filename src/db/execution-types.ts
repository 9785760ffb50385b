/** The rows and requests of executions-repository.ts and execution-queries.ts. */
import type { Selectable } from 'kysely';
import type { LineageFailedEvent } from '../events/event-bus.js';
import type { ExecutionTable, LineageStatus, LineageTable } from './schema.js';

export type ExecutionRow = Selectable<ExecutionTable>;
export type LineageRow = Selectable<LineageTable>;

export interface NewMessage {
  message_id: string;
  correlation_id: string | null;
  route_id: string;
  stage: string;
  emitted_by: string;
  envelope: Uint8Array;
}

export interface NewExecution {
  id: string;
  config_id: string;
  config_version: number;
  config_hash: string;
  config_yaml: string;
  tag: string | null;
  skip_init_message: boolean;
  init_payload: Record<string, unknown>;
  init: NewMessage | undefined;
  now: Date;
  /** Messages the execution may create, init message included; none when left out. */
  message_budget?: number | null | undefined;
}

/** What adding messages to an execution did. */
export interface AddOutcome {
  /** The ids inserted (not already present); none when the execution is not running. */
  inserted: string[];
  /** Set when the messages would have passed the execution's budget: it failed instead. */
  failedExecution: ExecutionRow | undefined;
}

export interface FinishedMessage {
  message_id: string;
  execution_id: string;
  started_at: Date;
  finished_at: Date;
  attempts: number;
}

export interface FinishRequest {
  message: FinishedMessage;
  status: Exclude<LineageStatus, 'queued'>;
  error: string | null;
  outputs: readonly NewMessage[];
  /**
   * For a failed message: the lineage.failed event raised once the finish is applied, kept in
   * the webhook outbox in the same statement (migration 0012).
   */
  failedEvent?: LineageFailedEvent | undefined;
}

export interface FinishOutcome {
  /** False when the message had already been finished (a duplicate delivery). */
  applied: boolean;
  /** Outputs inserted by this call (not already present). */
  inserted: string[];
  /** Set when this call moved the execution to a terminal state. */
  finishedExecution: ExecutionRow | undefined;
}

export interface ExecutionStatistics {
  execution_id: string;
  total_messages: number;
  completed_messages: number;
  failed_messages: number;
  skipped_messages: number;
  processing_messages: number;
  success_rate: number;
  /** The earliest failed messages (at most FIRST_ERRORS), so a failure's reason is one read away. */
  first_errors: FailedMessage[];
}

/** One stage's messages in an execution, by status. */
export interface StageCounts {
  route_id: string;
  stage: string;
  queued: number;
  completed: number;
  failed: number;
  skipped: number;
}

export interface FailedMessage {
  message_id: string;
  route_id: string;
  stage: string;
  error: string | null;
}
