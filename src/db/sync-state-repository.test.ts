import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTargets } from '../../test/helpers/databases.js';
import { insertConfig, insertExecution } from '../../test/helpers/execution-rows.js';
import type { Database } from './database.js';
import { createExecutionsRepository } from './executions-repository.js';
import { createExecutionClaims, createSyncStateRepository } from './sync-state-repository.js';

describe.each(databaseTargets())('sync state and execution claims on $name', (target) => {
  let database: Database;
  let configId: string;
  beforeAll(async () => {
    database = await target.open();
    configId = await insertConfig(database.db);
  });
  afterAll(async () => {
    await database?.close();
  });

  const execution = () => insertExecution(database.db, configId);

  it('counts a value as settled only once the run that wrote it completed', async () => {
    const repository = createSyncStateRepository(database.db);
    const first = await execution();
    const run = repository.forRun(configId, first, () => new Date());
    await run.put('space', [{ key: 'p1', value: { version: 2 } }]);
    expect([...(await run.settled('space'))]).toEqual([]);
    expect([...(await run.all('space'))]).toEqual([['p1', { version: 2 }]]);
    await createExecutionsRepository(database.db).endExecution(first, 'completed', new Date());
    const next = repository.forRun(configId, await execution(), () => new Date());
    expect([...(await next.settled('space'))]).toEqual([['p1', { version: 2 }]]);
    // Rewritten by a run that then fails: no longer settled.
    await next.put('space', [{ key: 'p1', value: { version: 3 } }]);
    expect([...(await next.settled('space'))]).toEqual([]);
    await next.remove('space', ['p1']);
    expect([...(await next.all('space'))]).toEqual([]);
  });

  it('reads only the keys asked for, when asked for some', async () => {
    const run = createSyncStateRepository(database.db).forRun(configId, await execution(), () => new Date());
    await run.put('pages', [
      { key: 'a', value: { hash: 1 } },
      { key: 'b', value: { hash: 2 } },
    ]);
    expect([...(await run.all('pages', ['b', 'missing']))]).toEqual([['b', { hash: 2 }]]);
    expect([...(await run.all('pages', []))]).toEqual([]);
    expect((await run.all('pages')).size).toBe(2);
  });

  it('claims each key once per execution, up to a limit', async () => {
    const claims = createExecutionClaims(database.db);
    const one = claims.forExecution(await execution());
    expect([...(await one.claim('urls', ['a', 'b', 'a']))].sort()).toEqual(['a', 'b']);
    expect([...(await one.claim('urls', ['b', 'c', 'd', 'e'], 4))].sort()).toEqual(['c', 'd']);
    expect([...(await one.claim('other', ['a']))]).toEqual(['a']);
    // Another execution starts afresh.
    const two = claims.forExecution(await execution());
    expect([...(await two.claim('urls', ['a']))]).toEqual(['a']);
  });
});
