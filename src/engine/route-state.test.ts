import { describe, expect, it } from 'vitest';
import { createAdapterRegistry } from '../adapters/registry.js';
import type { ExecutionsRepository } from '../db/executions-repository.js';
import type { RouteControl, RoutesRepository } from '../db/routes-repository.js';
import { createRouteState } from './route-state.js';

/** A routes table in memory whose reads can be held back, to interleave them with writes. */
function fakeRoutes() {
  const table = new Map<string, RouteControl>();
  let heldRead: ((rows: RouteControl[]) => void) | undefined;
  let holdNextRead = false;
  let heldWrite: (() => void) | undefined;
  let holdNextWrite = false;
  const routes = {
    async controls() {
      const snapshot = [...table.values()].map((row) => ({ ...row }));
      if (!holdNextRead) return snapshot;
      holdNextRead = false;
      return new Promise<RouteControl[]>((resolve) => {
        heldRead = () => resolve(snapshot);
      });
    },
    async setControl(routeId: string, change: Partial<RouteControl>) {
      if (holdNextWrite) {
        // The write is not committed (nor seen by reads) until it is released.
        holdNextWrite = false;
        await new Promise<void>((resolve) => {
          heldWrite = resolve;
        });
      }
      const row = { route_id: routeId, paused: false, stopped: false, ...table.get(routeId), ...change };
      table.set(routeId, row);
      return row;
    },
  } as unknown as RoutesRepository;
  return {
    routes,
    table,
    holdNextRead: () => {
      holdNextRead = true;
    },
    releaseRead: () => heldRead?.([]),
    holdNextWrite: () => {
      holdNextWrite = true;
    },
    releaseWrite: () => heldWrite?.(),
  };
}

function routeStateOver(routes: RoutesRepository) {
  return createRouteState({
    routes,
    repository: {} as ExecutionsRepository,
    registry: createAdapterRegistry(),
    now: () => new Date(),
  });
}

describe('route state', () => {
  it('takes a change another instance made when it reloads', async () => {
    const fake = fakeRoutes();
    const state = routeStateOver(fake.routes);
    await state.load();
    expect(state.modeFor('ingest')).toBe('run');
    fake.table.set('ingest', { route_id: 'ingest', paused: false, stopped: true });
    await state.load();
    expect(state.modeFor('ingest')).toBe('skipping');
  });

  it('keeps a route a new run brought back when a reload read before it finishes after it', async () => {
    const fake = fakeRoutes();
    const state = routeStateOver(fake.routes);
    await state.apply('ingest', 'stop');
    expect(state.modeFor('ingest')).toBe('skipping');
    // A periodic reload reads the stopped row, then the run brings the route back, then the
    // reload's answer arrives.
    fake.holdNextRead();
    const reload = state.load();
    await state.bringBack(['ingest']);
    fake.releaseRead();
    await reload;
    expect(state.modeFor('ingest')).toBe('run');
    // The next reload reads the row as it is now.
    await state.load();
    expect(state.modeFor('ingest')).toBe('run');
  });

  it('keeps a route a new run brought back when a reload ends while the bring-back is being written', async () => {
    const fake = fakeRoutes();
    const state = routeStateOver(fake.routes);
    await state.apply('ingest', 'stop');
    // The run's write is in flight; a periodic reload reads the row as it was (stopped) and
    // replaces the controls; then the write completes. Seen on the PostgreSQL server under load.
    fake.holdNextWrite();
    const back = state.bringBack(['ingest']);
    await state.load();
    fake.releaseWrite();
    await back;
    expect(state.modeFor('ingest')).toBe('run');
  });
});
