import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTargets } from '../../test/helpers/databases.js';
import { insertConfig, insertExecution, queuedMessage } from '../../test/helpers/execution-rows.js';
import type { Database } from './database.js';
import { createExecutionsRepository } from './executions-repository.js';

/** Each lineage row of `executionId` and the heap page it is on. */
async function pages(database: Database, executionId: string): Promise<Map<string, number>> {
  const result = await sql<{ message_id: string; page: number }>`
    select message_id, (ctid::text::point)[0]::int as page from lineage where execution_id = ${executionId}`.execute(
    database.db,
  );
  return new Map(result.rows.map((row) => [row.message_id, row.page]));
}

// Migration 18: finishing a batch of messages queued together updates their rows in place (HOT),
// so no finish writes the lineage indexes or moves a row to another page.
describe.each(databaseTargets())('lineage fill factor on $name', (target) => {
  let database: Database;
  beforeAll(async () => {
    database = await target.open();
  });
  afterAll(async () => {
    await database?.close();
  });

  it('a batch finished in one statement stays on the pages it was queued on', async () => {
    const init = queuedMessage(null);
    const id = await insertExecution(database.db, await insertConfig(database.db), init);
    const repository = createExecutionsRepository(database.db);
    // bench:engine's rows: an envelope of about 330 bytes, 13 rows a page at fillfactor 80.
    const children = Array.from({ length: 300 }, () => queuedMessage(init.message_id, randomBytes(330)));
    await repository.addMessages(id, children, new Date());
    const queued = await pages(database, id);
    const at = new Date();
    const outcomes = await repository.finishMessages(
      children.map((child) => ({
        message: {
          message_id: child.message_id,
          execution_id: id,
          started_at: at,
          finished_at: at,
          attempts: 1,
        },
        status: 'completed' as const,
        error: null,
        outputs: [],
      })),
    );
    expect(outcomes.every((outcome) => outcome.applied)).toBe(true);
    const finished = await pages(database, id);
    const moved = children.filter((child) => finished.get(child.message_id) !== queued.get(child.message_id));
    expect(moved).toHaveLength(0);
  });
});
