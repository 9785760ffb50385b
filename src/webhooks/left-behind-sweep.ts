/**
 * Recovering what dead dispatchers left behind (see dispatcher.ts): journal rows whose lease ran
 * out become pending rows, and events whose outbox row outlived the instance that raised them
 * are recorded as pending rows.
 */
import type { WebhooksRepository } from '../db/webhooks-repository.js';
import { eventRows } from './event-recording.js';

/** How often (at most) the pump looks for journal rows and outbox rows whose dispatcher died. */
const EXPAND_EVERY_MS = 1000;
/**
 * How old an outbox row must be before a sweep records it: the instance that raised the event
 * records it within milliseconds, so a row this old was left behind.
 */
const OUTBOX_GRACE_MS = 30_000;
/** How long a sweep's mark stays: far past any recording by the instance that raised the event. */
const OUTBOX_MARK_KEPT_MS = 3_600_000;
/** Outbox rows recorded per sweep statement. */
const OUTBOX_SWEEP_BATCH = 500;

/** Sweeps at most once a second, or whenever `force`d; `recorded` is called when rows were added. */
export function createLeftBehindSweep(options: {
  repository: WebhooksRepository;
  now: () => Date;
  newId: () => string;
  recorded: () => void;
}): (force: boolean) => Promise<void> {
  const { repository, now } = options;
  let lastExpansion = 0;

  /**
   * Events whose outbox row is still there long after the change committed: the instance that
   * raised them died before recording them (or has no dispatcher). They become pending rows,
   * and their outbox rows are marked recorded, in one statement.
   */
  async function recordLeftBehind(): Promise<void> {
    const at = now().getTime();
    await repository.purgeRecorded(new Date(at - OUTBOX_MARK_KEPT_MS));
    for (;;) {
      const left = await repository.leftBehind(new Date(at - OUTBOX_GRACE_MS), OUTBOX_SWEEP_BATCH);
      if (left.length === 0) return;
      await repository.recordEvents(eventRows(left, now(), options.newId), { sweep: true });
      options.recorded();
      if (left.length < OUTBOX_SWEEP_BATCH) return;
    }
  }

  /** Journal rows whose dispatcher died become pending rows (at most once a second, or when polled). */
  return async function expandExpired(force: boolean): Promise<void> {
    if (!force && Date.now() - lastExpansion < EXPAND_EVERY_MS) return;
    lastExpansion = Date.now();
    while ((await repository.expandExpiredJournals(now())) > 0) {}
    await recordLeftBehind();
  };
}
