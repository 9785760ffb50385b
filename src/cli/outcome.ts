/**
 * A run's outcome for `weir run`: the execution answer's `outcome` when the service gives one,
 * otherwise derived from its status and message counts, so a run with failures never reads
 * as success.
 */
export const outcomes = ['succeeded', 'partial', 'failed', 'empty'] as const;
export type Outcome = (typeof outcomes)[number];

export interface MessageCounts {
  completed_messages: number;
  failed_messages: number;
}

export function runOutcome(execution: { status: string; outcome?: unknown }, counts: MessageCounts): Outcome {
  if ((outcomes as readonly unknown[]).includes(execution.outcome)) return execution.outcome as Outcome;
  // A cancelled run did not run to its end: it failed, as far as `weir run` is concerned.
  if (execution.status === 'failed' || execution.status === 'cancelled') return 'failed';
  if (counts.failed_messages > 0) return 'partial';
  if (counts.completed_messages === 0) return 'empty';
  return 'succeeded';
}

/** 0 only when the run succeeded: a partial, failed or empty run is 1. */
export function outcomeExitCode(outcome: Outcome): number {
  return outcome === 'succeeded' ? 0 : 1;
}
