import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createEventBus, type EventBus } from '../events/event-bus.js';
import { searchStarted } from '../search-index/search-activity.js';
import { scheduleVectorIndexBuilds, type VectorIndexBuilds } from './vector-index-builds.js';

const quietMs = 1_000;

function started(events: EventBus, id: string) {
  events.emit({
    type: 'execution.started',
    execution_id: id,
    config_id: 'c',
    status: 'running',
    timestamp: '',
  });
}

function completed(events: EventBus, id: string) {
  events.emit({
    type: 'execution.completed',
    execution_id: id,
    config_id: 'c',
    status: 'completed',
    timestamp: '',
  });
}

describe('scheduleVectorIndexBuilds', () => {
  let events: EventBus;
  let db: object;
  let builds: number;
  let scheduled: VectorIndexBuilds | undefined;
  const logger = { info: () => {}, error: () => {} };

  beforeEach(() => {
    vi.useFakeTimers();
    events = createEventBus();
    db = {};
    builds = 0;
  });
  afterEach(async () => {
    await scheduled?.stop();
    vi.useRealTimers();
  });

  function schedule(deferred: boolean) {
    scheduled = scheduleVectorIndexBuilds({
      build: async () => {
        builds++;
        return ['m'];
      },
      events,
      db,
      deferred,
      quietMs,
      logger,
    });
    return scheduled;
  }

  it('on a server builds as each execution ends', async () => {
    schedule(false);
    started(events, 'e1');
    completed(events, 'e1');
    await vi.advanceTimersByTimeAsync(0);
    expect(builds).toBe(1);
  });

  it('on PGlite waits for a quiet moment: no execution running, no search in progress or for quietMs', async () => {
    const builder = schedule(true);
    await vi.advanceTimersByTimeAsync(quietMs); // the look-up at start for a graph left unbuilt
    expect(builds).toBe(1);
    started(events, 'e1');
    started(events, 'e2');
    completed(events, 'e1');
    await vi.advanceTimersByTimeAsync(quietMs * 3);
    expect(builds, 'e2 still runs').toBe(1);
    completed(events, 'e2');
    await vi.advanceTimersByTimeAsync(quietMs - 10);
    const ended = searchStarted(db); // a search postpones it, and holds it while in progress
    await vi.advanceTimersByTimeAsync(quietMs * 3);
    expect(builds, 'a search is in progress').toBe(1);
    ended();
    await vi.advanceTimersByTimeAsync(quietMs - 10);
    searchStarted({}); // another database's search does not
    expect(builds).toBe(1);
    const built = builder.whenBuilt();
    await vi.advanceTimersByTimeAsync(10);
    await built;
    expect(builds).toBe(2);
  });

  it('stop cancels a build not begun', async () => {
    const builder = schedule(true);
    await builder.stop();
    await vi.advanceTimersByTimeAsync(quietMs * 2);
    expect(builds).toBe(0);
    completed(events, 'e1');
    await vi.advanceTimersByTimeAsync(quietMs * 2);
    expect(builds).toBe(0);
  });
});
