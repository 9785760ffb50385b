/**
 * The order a finish ends an execution in (finish-statement.ts): the statement that drains it
 * leaves it running, and the next one ends it with its outcome. So an execution whose work all
 * failed goes from running to failed and is never seen completed, not even between the two
 * statements, and its outbox event is the failed one, with its outcome. Every status an
 * execution takes is recorded by a trigger of the test's own, so a transient `completed` would
 * show even if a later write corrected it.
 */
import { sql } from 'kysely';
import { uuidv7 } from 'uuidv7';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTargets, type TestDatabase } from '../../test/helpers/databases.js';
import { insertConfig, insertExecution, queuedMessage } from '../../test/helpers/execution-rows.js';
import type { Database } from './database.js';
import type { FinishRequest, NewMessage } from './execution-types.js';
import { createExecutionsRepository } from './executions-repository.js';

describe.each(databaseTargets())('the order an execution ends in, on $name', (target) => {
  let database: TestDatabase;
  let configId: string;
  beforeAll(async () => {
    database = await target.open();
    configId = await insertConfig(database.db);
    await sql`create table status_changes (execution_id uuid, old_status text, new_status text, outcome text)`.execute(
      database.db,
    );
    await sql`create function record_status_change() returns trigger language plpgsql as $$
      begin
        insert into status_changes values (new.id, old.status, new.status, new.outcome);
        return null;
      end $$`.execute(database.db);
    await sql`create trigger executions_status_changes after update on executions
      for each row when (old.status is distinct from new.status) execute function record_status_change()`.execute(
      database.db,
    );
    // A subscription, so the outbox trigger writes the execution events (migration 0012).
    await sql`insert into webhook_subscriptions (webhook_id, url, secret, event_types, created_at, updated_at)
      values (${uuidv7()}, 'http://127.0.0.1:9/hook', 's', '["*"]'::jsonb, now(), now())`.execute(
      database.db,
    );
  });
  afterAll(async () => {
    await database?.close();
  });

  /** An execution whose init message completed with `children` queued outputs. */
  async function started(db: Database, children: number) {
    const repository = createExecutionsRepository(db.db);
    const init = queuedMessage(null);
    const id = await insertExecution(db.db, configId, init);
    const outputs = Array.from({ length: children }, () => queuedMessage(init.message_id));
    await repository.finishMessages([request(id, init.message_id, 'completed', outputs)]);
    return { id, outputs };
  }

  const request = (
    executionId: string,
    messageId: string,
    status: 'completed' | 'failed',
    outputs: NewMessage[] = [],
  ): FinishRequest => ({
    message: {
      message_id: messageId,
      execution_id: executionId,
      started_at: new Date(),
      finished_at: new Date(),
      attempts: 1,
    },
    status,
    error: status === 'failed' ? 'boom' : null,
    outputs,
  });

  async function changes(executionId: string) {
    const result = await sql<{ old_status: string; new_status: string; outcome: string | null }>`
      select old_status, new_status, outcome from status_changes where execution_id = ${executionId}`.execute(
      database.db,
    );
    return result.rows;
  }

  async function outboxEvents(executionId: string) {
    const result = await sql<{ event_type: string; event: { status: string; outcome: string | null } }>`
      select event_type, event from webhook_event_outbox where subject_id = ${executionId}
      order by event_type`.execute(database.db);
    return result.rows.map((row) => ({
      type: row.event_type,
      status: row.event.status,
      outcome: row.event.outcome,
    }));
  }

  it('goes from running to failed when its work all failed, on each form of the finish', async () => {
    // One execution per batch; two in one batch (rows locked in id order); a batch that also
    // queues outputs.
    const alone = await started(database, 2);
    const pair = [await started(database, 1), await started(database, 1)];
    const withOutputs = await started(database, 1);
    const other = await started(database, 1);
    const repository = createExecutionsRepository(database.db);
    const [first, second] = alone.outputs as [NewMessage, NewMessage];
    await repository.finishMessages([request(alone.id, first.message_id, 'failed')]);
    const last = await repository.finishMessages([request(alone.id, second.message_id, 'failed')]);
    expect(last[0]?.finishedExecution).toMatchObject({ status: 'failed', outcome: 'failed' });
    await repository.finishMessages(
      pair.map((execution) =>
        request(execution.id, (execution.outputs[0] as NewMessage).message_id, 'failed'),
      ),
    );
    const [otherChild] = other.outputs as [NewMessage];
    const mixed = await repository.finishMessages([
      request(withOutputs.id, (withOutputs.outputs[0] as NewMessage).message_id, 'failed'),
      request(other.id, otherChild.message_id, 'completed', [queuedMessage(otherChild.message_id)]),
    ]);
    expect(mixed[0]?.finishedExecution).toMatchObject({ status: 'failed', outcome: 'failed' });
    for (const { id } of [alone, ...pair, withOutputs]) {
      expect(await changes(id)).toEqual([{ old_status: 'running', new_status: 'failed', outcome: 'failed' }]);
      expect(await outboxEvents(id)).toEqual([
        { type: 'execution.failed', status: 'failed', outcome: 'failed' },
        { type: 'execution.started', status: 'running', outcome: null },
      ]);
    }
    expect(await changes(other.id)).toEqual([]);
  });

  it('ends failed when two instances finish its last failed messages at once', async () => {
    // On a server, each finish reads the lineage as of its own snapshot: the one that drains
    // the execution may not see the other's failure yet. The outcome is read after both.
    // PGlite has one session, so there the two finishes interleave on one handle instead.
    const another = (await database.openAnotherHandle?.()) ?? database;
    try {
      const executions = await Promise.all(Array.from({ length: 40 }, () => started(database, 2)));
      await Promise.all(
        executions.flatMap(({ id, outputs }) =>
          outputs.map((output, index) =>
            createExecutionsRepository((index === 0 ? database : another).db).finishMessages([
              request(id, output.message_id, 'failed'),
            ]),
          ),
        ),
      );
      for (const { id } of executions) {
        expect(await changes(id)).toEqual([
          { old_status: 'running', new_status: 'failed', outcome: 'failed' },
        ]);
      }
    } finally {
      if (another !== database) await another.close();
    }
  });
});
