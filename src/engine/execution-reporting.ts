/**
 * What the orchestrator tells about executions (orchestrator.ts): their events on the bus,
 * the log lines of an ended execution, and failing one that cannot start.
 */
import type { ExecutionRow } from '../db/execution-types.js';
import type { ExecutionEventType } from '../events/event-bus.js';
import type { OrchestratorDependencies } from './orchestrator-types.js';

export interface ExecutionReporting {
  /** Raises `type` for the execution as `row` has it. */
  emitExecution(type: ExecutionEventType, row: ExecutionRow): void;
  /** An execution its messages ended (`row`): logged and told, failed or completed. */
  reportEnded(row: ExecutionRow): void;
  /** Ends a running execution as failed with `error`, logged and told. */
  failExecution(row: ExecutionRow, error: string): Promise<void>;
}

export function createExecutionReporting(
  dependencies: Pick<OrchestratorDependencies, 'repository' | 'events' | 'now' | 'logger'>,
): ExecutionReporting {
  const { repository, events, now, logger } = dependencies;

  function emitExecution(type: ExecutionEventType, row: ExecutionRow): void {
    events.emit({
      type,
      execution_id: row.id,
      config_id: row.config_id,
      status: row.status,
      timestamp: now().toISOString(),
      error: row.error,
      outcome: row.outcome,
      first_errors: row.first_errors ?? [],
    });
  }

  /** A completed execution with failed messages says so in the log, with the first error. */
  async function warnOfPartialFailure(row: ExecutionRow): Promise<void> {
    try {
      const statistics = await repository.statistics(row.id);
      if (statistics.failed_messages === 0) return;
      const first = statistics.first_errors[0];
      logger.warn(
        { execution_id: row.id, failed_messages: statistics.failed_messages },
        `execution completed with ${statistics.failed_messages} of ${statistics.total_messages} messages failed` +
          (first ? `; first: ${first.route_id}/${first.stage}: ${first.error}` : ''),
      );
    } catch (error) {
      logger.error(
        { err: error, execution_id: row.id },
        'cannot read the statistics of a finished execution',
      );
    }
  }

  return {
    emitExecution,
    reportEnded(row) {
      if (row.status === 'failed') {
        logger.error({ execution_id: row.id }, `execution failed: ${row.error}`);
        emitExecution('execution.failed', row);
      } else {
        emitExecution('execution.completed', row);
        // Its outcome already says whether messages failed (only `partial` and `failed` count
        // them; null before migration 17): the statistics, a read of its every lineage row
        // (70 ms of PGlite's thread after 100,000 messages), only for the warning's numbers.
        if (row.outcome !== 'succeeded' && row.outcome !== 'empty') void warnOfPartialFailure(row);
      }
    },
    async failExecution(row, error) {
      const ended = await repository.endExecution(row.id, 'failed', now(), error);
      logger.error({ execution_id: row.id }, error);
      if (ended) emitExecution('execution.failed', ended);
    },
  };
}
