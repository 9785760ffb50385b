/**
 * The orchestrator's poll of the database (orchestrator.ts): `synchronise` runs every
 * interval, one at a time, while `keepGoing` says so; stop() waits for the poll under way, so
 * the database can be closed right after it.
 */
export interface OrchestratorPolling {
  /** Schedules the next poll. */
  schedule(): void;
  /** Cancels the next poll and waits for the one under way. */
  stop(): Promise<void>;
}

export function createOrchestratorPolling(options: {
  synchronise: () => Promise<void>;
  intervalMs: number;
  keepGoing: () => boolean;
  onError: (error: unknown) => void;
}): OrchestratorPolling {
  let timer: NodeJS.Timeout | undefined;
  /** The poll under way, awaited by stop() so the database can be closed right after it. */
  let polling: Promise<void> | undefined;

  function schedule(): void {
    timer = setTimeout(async () => {
      polling = options.synchronise().catch(options.onError);
      await polling;
      polling = undefined;
      if (options.keepGoing()) schedule();
    }, options.intervalMs);
    timer.unref();
  }

  return {
    schedule,
    async stop() {
      if (timer) clearTimeout(timer);
      await polling;
    },
  };
}
