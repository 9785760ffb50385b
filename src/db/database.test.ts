import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTargets } from '../../test/helpers/databases.js';
import type { Database } from './database.js';
import { describeUrl } from './database.js';
import { migrateToLatest } from './migrate.js';
import { migrations } from './migrations/index.js';

describe.each(databaseTargets())('database port on $name', (target) => {
  let database: Database;
  beforeAll(async () => {
    database = await target.open();
  });
  afterAll(async () => {
    await database?.close();
  });

  it('applies every migration once and records it', async () => {
    const rows = await database.db.selectFrom('weir_schema_migrations').select(['id', 'name']).execute();
    // Numbered 1..n without gaps, each applied once.
    expect(rows.map((row) => row.id)).toEqual(migrations.map((_, index) => index + 1));
    expect(await migrateToLatest(database.db)).toEqual([]);
  });

  it('runs concurrent migrations without applying one twice', async () => {
    const extra = { id: 9001, name: 'concurrency-probe', statements: ['create table probe (id int)'] };
    const results = await Promise.all([
      migrateToLatest(database.db, [extra]),
      migrateToLatest(database.db, [extra]),
      migrateToLatest(database.db, [extra]),
    ]);
    expect(results.flat()).toEqual([9001]);
    await sql`drop table probe`.execute(database.db);
    await database.db.deleteFrom('weir_schema_migrations').where('id', '=', 9001).execute();
  });

  it('rolls a failed migration back whole', async () => {
    const broken = {
      id: 9002,
      name: 'broken',
      statements: ['create table half_done (id int)', 'this is not sql'],
    };
    await expect(migrateToLatest(database.db, [broken])).rejects.toThrow();
    const tables = await sql<{
      n: number;
    }>`select count(*)::int as n from pg_tables where tablename = 'half_done'`.execute(database.db);
    expect(tables.rows[0]?.n).toBe(0);
  });

  it('keeps a transaction isolated from queries issued while it runs', async () => {
    const outside = database.db.selectFrom('pipeline_configs').select('id').execute();
    await database.db.transaction().execute(async (transaction) => {
      await sql`select 1`.execute(transaction);
    });
    await expect(outside).resolves.toEqual([]);
  });

  it('reports the server version', async () => {
    expect(await database.serverVersion()).toMatch(/^\d+/);
  });
});

describe('describeUrl', () => {
  it('never shows credentials', () => {
    expect(describeUrl('postgres://user:hunter2@db.example:5432/weir')).toBe(
      'postgres://db.example:5432/weir',
    );
  });
});
