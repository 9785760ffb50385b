/**
 * One line that says how an execution ended, for people (the CLI, logs): Weir's outcome first,
 * since the spec's `completed` only says the run drained (docs/engine.md, "Outcomes"). Takes
 * the execution answer of the API, so a client needs nothing else.
 */
export interface DescribedExecution {
  status: string;
  outcome?: string | null | undefined;
  error?: string | null | undefined;
  first_errors?:
    | ReadonlyArray<{ route_id: string; stage: string; status: string; error: string | null }>
    | undefined;
}

const MEANING: Record<string, string> = {
  succeeded: 'succeeded',
  partial: 'partial: some messages failed or were skipped, the rest reached the end',
  failed: 'failed',
  empty: 'empty: nothing reached the end of the pipeline',
};

/** `partial: some messages failed ...; first: sink/synthetic_sink: synthetic failure` */
export function describeOutcome(execution: DescribedExecution): string {
  if (execution.status === 'running') return 'running';
  const outcome = execution.outcome ? (MEANING[execution.outcome] ?? execution.outcome) : execution.status;
  const verdict = execution.status === 'cancelled' ? `cancelled (${outcome})` : outcome;
  const first = execution.first_errors?.[0];
  if (first) return `${verdict}; first: ${first.route_id}/${first.stage}: ${first.error ?? first.status}`;
  return execution.error ? `${verdict}; ${execution.error}` : verdict;
}

/** True when a run needs a person's attention: it failed, partly failed or did nothing. */
export function needsAttention(execution: DescribedExecution): boolean {
  return (
    execution.status === 'failed' ||
    execution.outcome === 'failed' ||
    execution.outcome === 'partial' ||
    execution.outcome === 'empty'
  );
}
