import { describe, expect, it, vi } from 'vitest';
import type { Outcome } from '../db/execution-outcome.js';
import type { ExecutionRow, ExecutionStatistics } from '../db/execution-types.js';
import { createEventBus } from '../events/event-bus.js';
import { createExecutionReporting } from './execution-reporting.js';
import type { OrchestratorDependencies } from './orchestrator-types.js';

const row = (outcome: Outcome | null): ExecutionRow => ({
  id: 'e1',
  config_id: 'c1',
  config_version: 1,
  config_hash: 'h',
  config_yaml: 'routes: []',
  tag: null,
  status: 'completed',
  skip_init_message: false,
  init_payload: {},
  pending_messages: 0,
  message_budget: null,
  created_messages: 3,
  error: null,
  created_at: new Date(0),
  updated_at: new Date(0),
  finished_at: new Date(0),
  outcome,
  first_errors: [],
});

const statistics: ExecutionStatistics = {
  execution_id: 'e1',
  total_messages: 3,
  completed_messages: 2,
  failed_messages: 1,
  skipped_messages: 0,
  processing_messages: 0,
  success_rate: 2 / 3,
  first_errors: [{ message_id: 'm1', route_id: 'r', stage: 's', error: 'boom' }],
};

/** The reporting of a completed execution: whether it read the statistics, and its warnings. */
async function reportCompleted(outcome: Outcome | null) {
  const read = vi.fn(async () => statistics);
  const warnings: string[] = [];
  const reporting = createExecutionReporting({
    repository: { statistics: read } as unknown as OrchestratorDependencies['repository'],
    events: createEventBus(),
    now: () => new Date(0),
    logger: { info: () => {}, warn: (_object, message) => warnings.push(message), error: () => {} },
  });
  reporting.reportEnded(row(outcome));
  // The warning's read and log are promise continuations: done by the next macrotask.
  await new Promise((resolve) => setImmediate(resolve));
  return { reads: read.mock.calls.length, warnings };
}

describe('execution reporting', () => {
  it('reads no statistics for a completed execution whose outcome says no message failed', async () => {
    expect(await reportCompleted('succeeded')).toEqual({ reads: 0, warnings: [] });
    expect(await reportCompleted('empty')).toEqual({ reads: 0, warnings: [] });
  });

  it('warns with the statistics when messages failed, or when the outcome is unknown', async () => {
    for (const outcome of ['partial', 'failed', null] as const) {
      const { reads, warnings } = await reportCompleted(outcome);
      expect(reads).toBe(1);
      expect(warnings).toEqual(['execution completed with 1 of 3 messages failed; first: r/s: boom']);
    }
  });
});
