/**
 * Stopping the engine's orchestrator also stops its HNSW builds: every caller stops the
 * orchestrator before closing the database, and a deferred build's quiet-moment timer that
 * fired after that failed on the closed database (seen in bench:engine's log).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { uuidv7 } from 'uuidv7';
import { describe, expect, it } from 'vitest';
import { createBuiltinRegistry } from '../src/adapters/builtin.js';
import { createMemoryBroker } from '../src/broker/memory.js';
import { openDatabase } from '../src/db/database.js';
import { createEngine } from '../src/engine/create-engine.js';
import { createEventBus } from '../src/events/event-bus.js';
import { createFilesystemObjectStore } from '../src/storage/fs.js';

describe('engine stop', () => {
  it('cancels a deferred HNSW build, so none starts on the database closed after the stop', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'weir-engine-stop-'));
    const database = await openDatabase({});
    const errors: string[] = [];
    const broker = createMemoryBroker();
    const engine = createEngine({
      database,
      registry: createBuiltinRegistry(),
      broker,
      storage: createFilesystemObjectStore(path.join(dataDir, 'objects')),
      events: createEventBus(),
      now: () => new Date(),
      newId: uuidv7,
      logger: {
        info: () => {},
        warn: () => {},
        error: (_o: object, message: string) => errors.push(message),
      },
      // On PGlite a start looks for graphs left unbuilt after this quiet time.
      vectorIndexQuietMs: 300,
    });
    await engine.orchestrator.start();
    await engine.orchestrator.stop();
    await broker.close();
    await database.close();
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(errors).toEqual([]);
    await rm(dataDir, { recursive: true, force: true });
  });
});
