import type { KyselyPlugin, RootOperationNode } from 'kysely';
import { uuidv7 } from 'uuidv7';
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

  /** The fan-in on a handle that logs when each fan-in statement returned, in `log`. */
  function watched(log: string[]) {
    let statements = 0;
    const fanIn = createExecutionFanIn(database.db.withPlugin(statementLog(log, () => ++statements)));
    return { fanIn, statements: () => statements };
  }

  async function counter(executionId: string, group: string): Promise<number | undefined> {
    const row = await database.db
      .selectFrom('execution_fan_in_groups')
      .select('arrived')
      .where('execution_id', '=', executionId)
      .where('group_key', '=', group)
      .executeTakeFirst();
    return row?.arrived;
  }

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

  it('records concurrent arrivals of one group in one statement, each caller resolving after its commit', async () => {
    const executionId = await execution();
    const log: string[] = [];
    const { fanIn, statements } = watched(log);
    // Committed means visible to another session (on PGlite, the one session there is).
    const another = (await database.openAnotherHandle?.()) ?? database;
    try {
      const items = ['e', 'a', 'd', 'b', 'c'];
      const results = await Promise.all(
        items.map((item) =>
          fanIn
            .forExecution(executionId)
            .arrive('pkg', item, { item }, items.length)
            .then(async (result) => {
              log.push(`resolved ${item}`);
              const row = await another.db
                .selectFrom('execution_fan_in_arrivals')
                .select('item_key')
                .where('execution_id', '=', executionId)
                .where('item_key', '=', item)
                .executeTakeFirst();
              return { result, committed: row !== undefined };
            }),
        ),
      );
      expect(statements()).toBe(1);
      expect(log[0]).toBe('arrivals recorded');
      expect(log.filter((entry) => entry.startsWith('resolved'))).toHaveLength(items.length);
      expect(results.every((outcome) => outcome.committed)).toBe(true);
      expect(await counter(executionId, 'pkg')).toBe(items.length);
      const completions = results.filter((outcome) => outcome.result !== undefined);
      expect(completions).toHaveLength(1);
      expect(completions[0]?.result?.map((arrival) => arrival.item)).toEqual(['a', 'b', 'c', 'd', 'e']);
    } finally {
      if (another !== database) await another.close();
    }
  });

  it('rejects every caller of a failed batch and records none of its arrivals', async () => {
    const executionId = await execution();
    const { fanIn } = watched([]);
    // An execution that does not exist breaks the statement's foreign key: the whole batch fails.
    const calls = [
      fanIn.forExecution(executionId).arrive('pkg', 'a', {}, 2),
      fanIn.forExecution(uuidv7()).arrive('pkg', 'x', {}, 2),
      fanIn.forExecution(executionId).arrive('pkg', 'b', {}, 2),
    ];
    const settled = await Promise.allSettled(calls);
    expect(settled.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(await counter(executionId, 'pkg')).toBeUndefined();
    // Redelivered (the broker was not told they were done), they count and complete as new.
    expect(await fanIn.forExecution(executionId).arrive('pkg', 'a', {}, 2)).toBeUndefined();
    expect(await fanIn.forExecution(executionId).arrive('pkg', 'b', {}, 2)).toHaveLength(2);
  });

  it('counts a redelivered arrival once, within one batch and across batches', async () => {
    const executionId = await execution();
    const log: string[] = [];
    const { fanIn, statements } = watched(log);
    const arrive = (item: string) => fanIn.forExecution(executionId).arrive('pkg', item, { item }, 3);
    expect(await Promise.all([arrive('a'), arrive('b'), arrive('a')])).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    expect(statements()).toBe(1);
    expect(await counter(executionId, 'pkg')).toBe(2);
    expect(await Promise.all([arrive('b'), arrive('a')])).toEqual([undefined, undefined]);
    expect(await counter(executionId, 'pkg')).toBe(2);
    const [whole, again] = await Promise.all([arrive('c'), arrive('c')]);
    expect(whole?.map((arrival) => arrival.item)).toEqual(['a', 'b', 'c']);
    expect(again).toEqual(whole);
    expect(await counter(executionId, 'pkg')).toBe(3);
  });

  it('completes each group exactly once when two instances batch arrivals of the same groups', async () => {
    const executionId = await execution();
    const another = (await database.openAnotherHandle?.()) ?? database;
    try {
      const handles = [database, another].map((handle) =>
        createExecutionFanIn(handle.db).forExecution(executionId),
      );
      const groups = ['g1', 'g2', 'g3'];
      const items = Array.from({ length: 60 }, (_, index) => `item-${String(index).padStart(2, '0')}`);
      const arrivals = groups.flatMap((group) => items.map((item) => ({ group, item })));
      // In waves, so each instance writes several batches while the other writes its own.
      const results: Array<{ group: string; items?: string[] }> = [];
      for (let wave = 0; wave < 6; wave++) {
        const slice = arrivals.filter((_, index) => index % 6 === wave);
        const answers = await Promise.all(
          slice.map(({ group, item }, index) =>
            (handles[index % 2] as (typeof handles)[number]).arrive(group, item, {}, items.length),
          ),
        );
        answers.forEach((answer, index) => {
          if (answer)
            results.push({ group: slice[index]?.group as string, items: answer.map((a) => a.item) });
        });
      }
      expect(results.map((result) => result.group).sort()).toEqual(groups);
      for (const result of results) expect(result.items).toEqual(items);
    } finally {
      if (another !== database) await another.close();
    }
  });
});

/** Logs 'arrivals recorded' when a statement inserting fan-in arrivals returns, and counts them. */
function statementLog(log: string[], count: () => void): KyselyPlugin {
  const arrivals = new WeakSet<object>();
  return {
    transformQuery({ node, queryId }) {
      if (JSON.stringify(node).includes('insert into execution_fan_in_arrivals')) {
        arrivals.add(queryId);
        count();
      }
      return node as RootOperationNode;
    },
    async transformResult({ result, queryId }) {
      if (arrivals.has(queryId)) log.push('arrivals recorded');
      return result;
    },
  };
}
