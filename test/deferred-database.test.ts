/**
 * The database handle `weir serve` builds the engine and the app on while the database still
 * opens (src/db/deferred-database.ts, issue 35): its statements wait for the open and the
 * migrations, run on the opened database's driver (transactions whole, PGlite's one session
 * shared), and a failed open fails them and `opened` with the open's error.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { type Database, databaseLocation } from '../src/db/database.js';
import { deferredDatabase } from '../src/db/deferred-database.js';
import { databaseTargets } from './helpers/databases.js';

/** Whether `promise` has settled after the event loop has turned a few times. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe.each(databaseTargets())('deferred database handle on $name', (target) => {
  it('holds a statement sent before the open until the database is open and migrated, then answers it', async () => {
    let open!: (database: Database) => void;
    const opening = new Promise<Database>((resolve) => {
      open = resolve;
    });
    const { database, opened } = deferredDatabase(opening, { kind: 'pglite', location: 'pglite:test' });
    const early = sql<{
      applied: number;
    }>`select count(*)::int as applied from weir_schema_migrations`.execute(database.db);
    expect(await settled(early)).toBe(false);
    expect(await settled(opened)).toBe(false);
    const real = await target.open();
    try {
      open(real);
      await opened;
      const migrations = await sql<{
        applied: number;
      }>`select count(*)::int as applied from weir_schema_migrations`.execute(real.db);
      expect((await early).rows[0]?.applied).toBe(migrations.rows[0]?.applied);
      expect((await early).rows[0]?.applied).toBeGreaterThan(0);
      await database.ping();
    } finally {
      await database.close();
    }
  });

  it('runs transactions whole on the opened driver: a rollback undoes, a commit keeps', async () => {
    const real = await target.open();
    const { database, opened } = deferredDatabase(Promise.resolve(real), {
      kind: real.kind,
      location: real.location,
    });
    try {
      await opened;
      await sql`create table deferred_check (n int)`.execute(database.db);
      await expect(
        database.db.transaction().execute(async (trx) => {
          await sql`insert into deferred_check values (1)`.execute(trx);
          // Inside the transaction, its own insert is seen (same connection, same session).
          const inside = await sql<{ n: number }>`select count(*)::int as n from deferred_check`.execute(trx);
          expect(inside.rows[0]?.n).toBe(1);
          throw new Error('roll it back');
        }),
      ).rejects.toThrow('roll it back');
      await database.db.transaction().execute(async (trx) => {
        await sql`insert into deferred_check values (2)`.execute(trx);
      });
      const rows = await sql<{ n: number }>`select n from deferred_check order by n`.execute(database.db);
      expect(rows.rows).toEqual([{ n: 2 }]);
    } finally {
      await database.close();
    }
    // Closing the handle closed the opened database.
    await expect(real.ping()).rejects.toThrow();
  });
});

describe('deferred database handle whose open fails', () => {
  it('rejects opened and every statement with the open error, and closes quietly', async () => {
    const failure = new Error('data dir in use');
    const { database, opened } = deferredDatabase(Promise.reject(failure), {
      kind: 'pglite',
      location: databaseLocation({ dataDir: '/tmp/weir-deferred' }),
    });
    await expect(opened).rejects.toBe(failure);
    await expect(database.ping()).rejects.toBe(failure);
    expect(database.location).toBe('pglite:/tmp/weir-deferred/pgdata');
    await expect(database.close()).resolves.toBeUndefined();
  });
});
