/**
 * What `run` reports when creating the execution row hits a unique violation: "tag already
 * used" only for the tag's own index, the database's error for anything else (issue 32).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { uuidv7 } from 'uuidv7';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuiltinRegistry } from '../src/adapters/builtin.js';
import { createMemoryBroker } from '../src/broker/memory.js';
import { type Database, openDatabase } from '../src/db/database.js';
import { createEngine } from '../src/engine/create-engine.js';
import { createEventBus } from '../src/events/event-bus.js';
import { createFilesystemObjectStore } from '../src/storage/fs.js';

describe('run on a unique violation', () => {
  let database: Database;
  let dataDir: string;
  let engine: ReturnType<typeof createEngine>;
  /** Ids from a list that can be replayed, so a second run reuses the first's execution id. */
  let ids: string[] = [];
  let next = 0;
  const newId = () => {
    if (next === ids.length) ids.push(uuidv7());
    return ids[next++] as string;
  };
  const errors: string[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'weir-run-errors-'));
    database = await openDatabase({});
    engine = createEngine({
      database,
      registry: createBuiltinRegistry(),
      broker: createMemoryBroker(),
      storage: createFilesystemObjectStore(path.join(dataDir, 'objects')),
      events: createEventBus(),
      now: () => new Date(),
      newId,
      logger: { info: () => {}, warn: () => {}, error: (_object, message) => errors.push(message) },
      pollIntervalMs: 200,
    });
    await engine.orchestrator.start();
  });
  afterAll(async () => {
    await engine?.orchestrator.stop();
    await database?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const yaml =
    'routes:\n  - id: m\n    adapters:\n      - type: synthetic_fanout\n        config: { count: 1 }\n';

  it('says the tag is taken when the tag is', async () => {
    const config = await engine.configs.create({ config_yaml: yaml });
    await engine.orchestrator.run(config.id, { tag: 'once' });
    await expect(engine.orchestrator.run(config.id, { tag: 'once' })).rejects.toThrow(
      'tag "once" is already used by another execution',
    );
  });

  it('keeps the database error for another unique violation, with no tag in sight', async () => {
    const config = await engine.configs.create({ config_yaml: yaml });
    const start = next;
    await engine.orchestrator.run(config.id);
    // The same ids again: the execution id is taken (executions_pkey), no tag was given.
    next = start;
    const failure = await engine.orchestrator.run(config.id).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: '23505' });
    expect(String((failure as Error).message)).not.toMatch(/tag/);
    ids = [];
    next = 0;
  });
});
