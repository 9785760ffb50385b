import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTargets, type TestDatabase } from '../../test/helpers/databases.js';
import { insertConfig, insertExecution } from '../../test/helpers/execution-rows.js';
import { createExecutionFanIn } from './fan-in-repository.js';

describe.each(databaseTargets())('execution fan-in on $name', (target) => {
  let database: TestDatabase;
  let configId: string;
  beforeAll(async () => {
    database = await target.open();
    configId = await insertConfig(database.db);
  });
  afterAll(async () => {
    await database?.close();
  });

  const execution = () => insertExecution(database.db, configId);

  it('completes a group once, on the arrival that made it whole, whatever is redelivered', async () => {
    const fanIn = createExecutionFanIn(database.db).forExecution(await execution());
    expect(await fanIn.arrive('p1', 'b', { kept: true }, 3)).toBeUndefined();
    expect(await fanIn.arrive('p1', 'b', { kept: false }, 3)).toBeUndefined(); // a redelivery counts once
    expect(await fanIn.arrive('p1', 'a', { kept: false }, 3)).toBeUndefined();
    const whole = await fanIn.arrive('p1', 'c', { kept: true }, 3);
    expect(whole).toEqual([
      { item: 'a', value: { kept: false } },
      { item: 'b', value: { kept: true } },
      { item: 'c', value: { kept: true } },
    ]);
    // The completing message retried gets the group again; any other arrival never does.
    expect(await fanIn.arrive('p1', 'c', { kept: true }, 3)).toEqual(whole);
    expect(await fanIn.arrive('p1', 'a', { kept: false }, 3)).toBeUndefined();
    // Groups and executions are apart.
    expect(await fanIn.arrive('p2', 'a', {}, 1)).toEqual([{ item: 'a', value: {} }]);
    const other = createExecutionFanIn(database.db).forExecution(await execution());
    expect(await other.arrive('p1', 'a', {}, 2)).toBeUndefined();
  });

  it('completes exactly once when the last arrivals race, across instances', async () => {
    const executionId = await execution();
    const another = (await database.openAnotherHandle?.()) ?? database;
    try {
      const handles = [database, another].map((handle) =>
        createExecutionFanIn(handle.db).forExecution(executionId),
      );
      const items = Array.from({ length: 40 }, (_, index) => `item-${String(index).padStart(2, '0')}`);
      const results = await Promise.all(
        items.map((item, index) =>
          (handles[index % 2] as (typeof handles)[number]).arrive('pkg', item, { index }, items.length),
        ),
      );
      const completions = results.filter((result) => result !== undefined);
      expect(completions).toHaveLength(1);
      expect(completions[0]?.map((arrival) => arrival.item)).toEqual(items);
    } finally {
      if (another !== database) await another.close();
    }
  });
});
