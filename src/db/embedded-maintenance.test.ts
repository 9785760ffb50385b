import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from './database.js';
import { openDatabase } from './database.js';
import { startEmbeddedMaintenance } from './embedded-maintenance.js';

describe('embedded maintenance (PGlite)', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase({});
  });
  afterAll(async () => {
    await database?.close();
  });

  async function churn(): Promise<void> {
    await sql`create table if not exists churn (id int primary key, state text not null)`.execute(
      database.db,
    );
    await sql`create index if not exists churn_state on churn (state)`.execute(database.db);
    await sql`insert into churn select g, 'new' from generate_series(1, 5000) g on conflict do nothing`.execute(
      database.db,
    );
    // Each pass rewrites every row (not in place: the indexed column changes).
    for (let pass = 0; pass < 4; pass++)
      await sql`update churn set state = ${`pass-${pass}`}`.execute(database.db);
  }
  const tableBytes = async () =>
    Number(
      (await sql<{ size: string }>`select pg_total_relation_size('churn')::text as size`.execute(database.db))
        .rows[0]?.size,
    );

  it('reclaims dead row versions, so a table rewritten again and again stops growing', async () => {
    const maintenance = startEmbeddedMaintenance(database, { intervalMs: 3_600_000 });
    await churn();
    await maintenance.runOnce();
    const afterFirst = await tableBytes();
    // Without VACUUM every pass adds a full copy of the table and its index; with it, the
    // space of the old versions is reused.
    await churn();
    const withoutVacuum = await tableBytes();
    await maintenance.runOnce();
    await churn();
    const reused = await tableBytes();
    expect(withoutVacuum).toBeGreaterThanOrEqual(afterFirst);
    expect(reused).toBeLessThanOrEqual(withoutVacuum * 1.1);
    const vacuumed = await sql<{ vacuumed: boolean }>`
      select last_vacuum is not null as vacuumed from pg_stat_user_tables where relname = 'churn'`.execute(
      database.db,
    );
    expect(vacuumed.rows[0]?.vacuumed).toBe(true);
    await maintenance.stop();
  });

  it('freezes once transaction ids are older than the threshold', async () => {
    const maintenance = startEmbeddedMaintenance(database, { intervalMs: 3_600_000, freezeAge: 1 });
    await churn();
    const report = await maintenance.runOnce();
    expect(report.froze).toBe(true);
    expect(report.transactionAge).toBeGreaterThanOrEqual(1);
    const age = await sql<{ age: number }>`
      select age(datfrozenxid)::int as age from pg_database where datname = current_database()`.execute(
      database.db,
    );
    expect(age.rows[0]?.age).toBeLessThan(report.transactionAge);
    await maintenance.stop();
  });
});
