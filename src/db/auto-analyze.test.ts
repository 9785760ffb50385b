import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { databaseTargets } from '../../test/helpers/databases.js';
import { createAutoAnalyze } from './auto-analyze.js';

/** The columns of `table` that have statistics, and the row count the planner has for it. */
async function statistics(db: Kysely<unknown>, table: string) {
  const columns = await sql<{ attname: string; histogram: number | null }>`
    select attname, array_length(histogram_bounds, 1) as histogram from pg_stats
    where schemaname = current_schema() and tablename = ${table} order by attname`.execute(db);
  const rows = await sql<{ reltuples: number }>`
    select reltuples::float8 as reltuples from pg_class where oid = ${table}::regclass`.execute(db);
  return { columns: columns.rows, rows: Number(rows.rows[0]?.reltuples) };
}

describe.each(databaseTargets())('auto-analyze on $name', (target) => {
  it('analyses the named columns only, from the sample its statistics target sets, once enough rows are written', async () => {
    const database = await target.open();
    const db = database.db as Kysely<unknown>;
    try {
      // (No autovacuum on the server meanwhile: it would analyse every column.)
      await sql`create table analysed (id integer primary key, due integer, body text)
        with (autovacuum_enabled = false)`.execute(db);
      await sql`insert into analysed select n, n % 997, repeat('x', 50) from generate_series(1, 3000) n`.execute(
        db,
      );
      const written = createAutoAnalyze(db, 'analysed', { columns: ['id', 'due'], statisticsTarget: 10 });
      written(999);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect((await statistics(db, 'analysed')).columns).toEqual([]);
      written(1);
      let found = await statistics(db, 'analysed');
      for (let waited = 0; found.columns.length === 0 && waited < 5000; waited += 20) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        found = await statistics(db, 'analysed');
      }
      // Target 10: at most 11 histogram bounds (the default target, 100, gives 101).
      expect(found.columns.map((column) => column.attname)).toEqual(['due', 'id']);
      for (const column of found.columns) expect(column.histogram).toBeLessThanOrEqual(11);
      expect(found.rows).toBe(3000);
      expect(() => createAutoAnalyze(db, 'analysed', { statisticsTarget: 0 })).toThrow(/statistics target/);
    } finally {
      await database.close();
    }
  });
});
