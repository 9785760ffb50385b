import { uuidv7 } from 'uuidv7';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTargets } from '../../test/helpers/databases.js';
import { insertConfig, insertExecution, queuedMessage } from '../../test/helpers/execution-rows.js';
import type { Database } from './database.js';
import type { QueuedCursor } from './execution-queries.js';
import type { FinishedMessage, FinishOutcome, NewMessage } from './execution-types.js';
import { createExecutionsRepository, type ExecutionsRepository } from './executions-repository.js';

describe.each(databaseTargets())('executions repository on $name', (target) => {
  let database: Database;
  let configId: string;
  beforeAll(async () => {
    database = await target.open();
    configId = await insertConfig(database.db);
  });
  afterAll(async () => {
    await database?.close();
  });

  // One stage name for every message: the error texts below name it (`r/s`).
  const message = (id: string, correlation: string | null): NewMessage => ({
    ...queuedMessage(correlation, new Uint8Array([1, 2, 3]), id),
    stage: 's',
  });

  async function start(withInit = true, messageBudget: number | null = null) {
    const repository = createExecutionsRepository(database.db);
    const init = message(uuidv7(), null);
    const id = await insertExecution(database.db, configId, withInit ? init : undefined, {
      messageBudget,
      initPayload: { a: 1 },
    });
    return { repository, id, init };
  }

  // One message at a time through the group-commit entry point.
  const complete = async (
    repository: ExecutionsRepository,
    message: FinishedMessage,
    outputs: NewMessage[],
  ) =>
    (
      await repository.finishMessages([{ message, status: 'completed', error: null, outputs }])
    )[0] as FinishOutcome;
  const fail = async (repository: ExecutionsRepository, message: FinishedMessage, error: string) =>
    (
      await repository.finishMessages([{ message, status: 'failed', error, outputs: [] }])
    )[0] as FinishOutcome;

  const finished = (executionId: string, messageId: string) => ({
    message_id: messageId,
    execution_id: executionId,
    started_at: new Date(),
    finished_at: new Date(),
    attempts: 1,
  });

  it('completes the execution exactly when the last message finishes, across fan-out', async () => {
    const { repository, id, init } = await start();
    const children = [message(uuidv7(), init.message_id), message(uuidv7(), init.message_id)];
    const first = await complete(repository, finished(id, init.message_id), children);
    expect(first).toMatchObject({ applied: true, finishedExecution: undefined });
    expect(first.inserted).toHaveLength(2);
    expect((await repository.findExecution(id))?.pending_messages).toBe(2);
    const second = await complete(repository, finished(id, (children[0] as NewMessage).message_id), []);
    expect(second.finishedExecution).toBeUndefined();
    const last = await fail(repository, finished(id, (children[1] as NewMessage).message_id), 'boom');
    expect(last.finishedExecution).toMatchObject({ id, status: 'completed', pending_messages: 0 });
    expect(await repository.statistics(id)).toEqual({
      execution_id: id,
      total_messages: 3,
      completed_messages: 2,
      failed_messages: 1,
      skipped_messages: 0,
      processing_messages: 0,
      success_rate: 2 / 3,
      first_errors: [
        { message_id: (children[1] as NewMessage).message_id, route_id: 'r', stage: 's', error: 'boom' },
      ],
    });
    // Partial failure: completed, and `error` stays empty.
    expect((await repository.findExecution(id))?.error).toBeNull();
  });

  it('ends an execution failed when its init message failed, or every message past it, on both finish paths', async () => {
    // The init message fails (the one-statement path).
    const initFails = await start();
    const ended = await fail(
      initFails.repository,
      finished(initFails.id, initFails.init.message_id),
      'no root',
    );
    expect(ended.finishedExecution).toMatchObject({
      status: 'failed',
      error: '1 of 1 messages failed; first: r/s: no root',
    });
    // Every child fails.
    const childrenFail = await start();
    const children = [
      message(uuidv7(), childrenFail.init.message_id),
      message(uuidv7(), childrenFail.init.message_id),
    ];
    await complete(
      childrenFail.repository,
      finished(childrenFail.id, childrenFail.init.message_id),
      children,
    );
    await fail(
      childrenFail.repository,
      finished(childrenFail.id, (children[0] as NewMessage).message_id),
      'one',
    );
    const last = await fail(
      childrenFail.repository,
      finished(childrenFail.id, (children[1] as NewMessage).message_id),
      'two',
    );
    expect(last.finishedExecution?.status).toBe('failed');
    expect(last.finishedExecution?.error).toMatch(
      /^2 of 3 messages failed; first: r\/s: (one \| r\/s: two|two \| r\/s: one)$/,
    );
    // The transaction path (a batch with more outputs than one statement takes): an execution
    // drained in it ends failed too, while another one in the batch goes on.
    const big = await start();
    const drained = await start();
    const outcomes = await big.repository.finishMessages([
      { message: finished(drained.id, drained.init.message_id), status: 'failed', error: 'bad', outputs: [] },
      {
        message: finished(big.id, big.init.message_id),
        status: 'completed',
        error: null,
        outputs: Array.from({ length: 4001 }, () => message(uuidv7(), big.init.message_id)),
      },
    ]);
    expect(outcomes[0]?.finishedExecution).toMatchObject({
      id: drained.id,
      status: 'failed',
      error: '1 of 1 messages failed; first: r/s: bad',
    });
    expect(outcomes[1]?.finishedExecution).toBeUndefined();
  });

  it('ignores a duplicate finish and duplicate outputs', async () => {
    const { repository, id, init } = await start();
    const child = message(uuidv7(), init.message_id);
    await complete(repository, finished(id, init.message_id), [child]);
    const again = await complete(repository, finished(id, init.message_id), [child]);
    expect(again).toEqual({ applied: false, inserted: [], finishedExecution: undefined });
    expect((await repository.findExecution(id))?.pending_messages).toBe(1);
    expect(await repository.finishedAmong([init.message_id, child.message_id])).toEqual(
      new Set([init.message_id]),
    );
  });

  it('finishes a batch across executions in one call: duplicates once, each execution counted', async () => {
    const one = await start();
    const two = await start();
    const child = message(uuidv7(), one.init.message_id);
    const outcomes = await one.repository.finishMessages([
      { message: finished(one.id, one.init.message_id), status: 'completed', error: null, outputs: [child] },
      { message: finished(two.id, two.init.message_id), status: 'failed', error: 'boom', outputs: [] },
      // The same message again in the same batch: the first request takes it.
      { message: finished(one.id, one.init.message_id), status: 'failed', error: 'late', outputs: [child] },
    ]);
    expect(outcomes).toEqual([
      { applied: true, inserted: [child.message_id], finishedExecution: undefined },
      {
        applied: true,
        inserted: [],
        // Its init message failed: the execution failed.
        finishedExecution: expect.objectContaining({ id: two.id, status: 'failed' }),
      },
      { applied: false, inserted: [], finishedExecution: undefined },
    ]);
    expect(await one.repository.findExecution(one.id)).toMatchObject({
      status: 'running',
      pending_messages: 1,
    });
    expect(await one.repository.findExecution(two.id)).toMatchObject({
      status: 'failed',
      pending_messages: 0,
    });
    const [row] = await one.repository.upstream(one.init.message_id);
    expect(row).toMatchObject({ status: 'completed', error: null });
  });

  it('writes a batch with thousands of outputs, and adds thousands of messages, atomically in chunks', async () => {
    const { repository, id, init } = await start();
    // Past what one statement takes (4,000): the transaction path.
    const outputs = Array.from({ length: 4001 }, () => message(uuidv7(), init.message_id));
    const outcome = await complete(repository, finished(id, init.message_id), outputs);
    expect(outcome.inserted).toHaveLength(4001);
    const added = Array.from({ length: 4001 }, () => message(uuidv7(), null));
    expect((await repository.addMessages(id, added, new Date())).inserted).toHaveLength(4001);
    expect((await repository.addMessages(id, added.slice(0, 3), new Date())).inserted).toEqual([]);
    const few = [message(uuidv7(), null), message(uuidv7(), null)];
    expect((await repository.addMessages(id, few, new Date())).inserted).toEqual(
      few.map((entry) => entry.message_id),
    );
    expect((await repository.findExecution(id))?.pending_messages).toBe(4001 + 4001 + 2);
    // Nothing is added to an execution that is no longer running.
    await repository.endExecution(id, 'cancelled', new Date());
    expect((await repository.addMessages(id, [message(uuidv7(), null)], new Date())).inserted).toEqual([]);
    expect(
      await repository.addMessages(
        id,
        added.map(() => message(uuidv7(), null)),
        new Date(),
      ),
    ).toEqual({ inserted: [], failedExecution: undefined });
  });

  it('fails an execution whose messages would pass its budget, on every path that queues messages', async () => {
    const children = (parent: string, count: number) =>
      Array.from({ length: count }, () => message(uuidv7(), parent));
    const budgetError = (id: string, budget: number) =>
      `execution ${id} created more than ${budget} messages (max_messages_per_execution); `;
    // A finish in one statement: the init message and 3 children fit a budget of 4, 4 more do not.
    const small = await start(true, 4);
    const [child] = children(small.init.message_id, 1);
    await complete(small.repository, finished(small.id, small.init.message_id), [
      child as NewMessage,
      ...children(small.init.message_id, 2),
    ]);
    expect(await small.repository.findExecution(small.id)).toMatchObject({
      status: 'running',
      created_messages: 4,
      pending_messages: 3,
    });
    const over = await complete(
      small.repository,
      finished(small.id, (child as NewMessage).message_id),
      children((child as NewMessage).message_id, 4),
    );
    expect(over).toMatchObject({ applied: true, inserted: [] });
    expect(over.finishedExecution).toMatchObject({ id: small.id, status: 'failed', created_messages: 4 });
    expect(over.finishedExecution?.error).toContain(budgetError(small.id, 4));
    // Failed, it queues nothing more, and its pending messages stay as they are.
    const [, second] = (await small.repository.queuedMessages(small.id)).map((row) => row.message_id);
    const late = await complete(
      small.repository,
      finished(small.id, second as string),
      children(second as string, 1),
    );
    expect(late).toMatchObject({ applied: true, inserted: [], finishedExecution: undefined });
    expect(await small.repository.findExecution(small.id)).toMatchObject({
      status: 'failed',
      created_messages: 4,
    });
    // A finish with thousands of outputs (one transaction), and messages added (early outputs,
    // replay) in one statement and in one transaction.
    const large = await start(true, 4000);
    const transactionFinish = await complete(
      large.repository,
      finished(large.id, large.init.message_id),
      children(large.init.message_id, 4001),
    );
    expect(transactionFinish.inserted).toEqual([]);
    expect(transactionFinish.finishedExecution?.error).toContain(budgetError(large.id, 4000));
    for (const count of [11, 4001]) {
      const added = await start(true, 10);
      const outcome = await added.repository.addMessages(
        added.id,
        children(added.init.message_id, count),
        new Date(),
      );
      expect(outcome.inserted).toEqual([]);
      expect(outcome.failedExecution).toMatchObject({ id: added.id, status: 'failed', created_messages: 1 });
      expect(outcome.failedExecution?.error).toContain(budgetError(added.id, 10));
    }
    // Up to the budget exactly is allowed.
    const exact = await start(true, 10);
    const fits = await exact.repository.addMessages(exact.id, children(exact.init.message_id, 9), new Date());
    expect(fits.inserted).toHaveLength(9);
    expect(await exact.repository.findExecution(exact.id)).toMatchObject({
      status: 'running',
      created_messages: 10,
      pending_messages: 10,
    });
  });

  it('keeps envelopes of queued messages as an outbox and clears them when done', async () => {
    const { repository, id, init } = await start();
    const queued = await repository.queuedMessages(id);
    expect(queued.map((row) => row.message_id)).toEqual([init.message_id]);
    expect(Array.from(queued[0]?.envelope ?? [])).toEqual([1, 2, 3]);
    await complete(repository, finished(id, init.message_id), []);
    expect(await repository.queuedMessages(id)).toEqual([]);
  });

  it('reads the outbox a page at a time, every queued message once, oldest first', async () => {
    const { repository, id, init } = await start();
    // Messages added together share a queued_at, so the cursor must break ties by message id.
    const at = new Date();
    for (const count of [4, 3]) {
      const added = Array.from({ length: count }, () => message(uuidv7(), init.message_id));
      await repository.addMessages(id, added, at);
    }
    const seen: string[] = [];
    let after: QueuedCursor | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = await repository.queuedMessages(id, { limit: 3, after });
      if (page.length === 0) break;
      expect(page.length).toBeLessThanOrEqual(3);
      seen.push(...page.map((row) => row.message_id));
      after = page.at(-1);
    }
    const all = (await repository.queuedMessages(id)).map((row) => row.message_id);
    expect(all).toHaveLength(8);
    expect(seen).toEqual(all);
  });

  it('walks lineage upstream by correlation id', async () => {
    const { repository, id, init } = await start();
    const child = message(uuidv7(), init.message_id);
    const grandchild = message(uuidv7(), child.message_id);
    await complete(repository, finished(id, init.message_id), [child]);
    await complete(repository, finished(id, child.message_id), [grandchild]);
    const chain = await repository.upstream(grandchild.message_id);
    expect(chain.map((row) => row.message_id)).toEqual([
      grandchild.message_id,
      child.message_id,
      init.message_id,
    ]);
  });

  it('ends only a running execution, and refuses a second execution with the same tag', async () => {
    const { repository, id } = await start(false);
    expect(await repository.endExecution(id, 'cancelled', new Date())).toMatchObject({ status: 'cancelled' });
    expect(await repository.endExecution(id, 'failed', new Date())).toBeUndefined();
    const tagged = {
      config_id: configId,
      config_version: 1,
      config_hash: 'h',
      config_yaml: 'routes: []',
      tag: 'nightly-1',
      skip_init_message: true,
      init_payload: {},
      init: undefined,
      now: new Date(),
    };
    await repository.createExecution({ ...tagged, id: uuidv7() });
    await expect(repository.createExecution({ ...tagged, id: uuidv7() })).rejects.toThrow();
  });
});
