import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTargets, type TestDatabase } from '../../test/helpers/databases.js';
import { realArrayFromBinary } from './array-parameter.js';

/** float32 values of every kind: normal, subnormal, the extremes, signed zeros, infinities, and seeded noise. */
function vectors(): number[][] {
  const special = [
    0,
    -0,
    1,
    -1,
    1e-45,
    -1e-45,
    1.17549435e-38,
    3.4028235e38,
    -3.4028235e38,
    0.1,
    1 / 3,
    Infinity,
    -Infinity,
  ];
  let seed = 35;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const noise = Array.from({ length: 20 }, () =>
    Array.from({ length: 384 }, () => Math.fround((next() - 0.5) * 10 ** Math.floor(next() * 12 - 8))),
  );
  return [special, [], [0.5], ...noise];
}

/** Each element's float32 bits, so -0 and 0 differ and equal NaNs compare equal. */
const bitsOf = (values: ArrayLike<number>) => Array.from(new Uint32Array(Float32Array.from(values).buffer));

describe.each(databaseTargets())('real[] in binary on $name', (target) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await target.open();
    await sql`create table real_arrays (id int primary key, embedding real[] not null)`.execute(database.db);
    for (const [id, values] of vectors().entries()) {
      const literal = `{${values.map((value) => (Object.is(value, -0) ? '-0' : String(value))).join(',')}}`;
      await sql`insert into real_arrays values (${id}, ${literal}::real[])`.execute(database.db);
    }
  });
  afterAll(async () => {
    await database.close();
  });

  it('decodes array_send (in base64, as the in-memory index reads it) to the text parse, bit for bit', async () => {
    const rows = await sql<{ id: number; embedding: number[] | string; binary: string }>`
      select id, embedding, encode(array_send(embedding), 'base64') as binary from real_arrays order by id`.execute(
      database.db,
    );
    expect(rows.rows).toHaveLength(vectors().length);
    for (const row of rows.rows) {
      // node-postgres gives a real[] as strings of its decimals; PGlite as numbers.
      const parsed = (row.embedding as (number | string)[]).map(Number);
      const decoded = realArrayFromBinary(Buffer.from(row.binary, 'base64'));
      expect(bitsOf(decoded)).toEqual(bitsOf(parsed));
      expect(bitsOf(decoded)).toEqual(bitsOf(vectors()[row.id] as number[]));
    }
  });

  it('refuses what is not a one-dimensional real[] without NULLs', async () => {
    const forms = await sql<{ binary: string }>`
      select encode(array_send(value), 'base64') as binary from (values
        ('{1,NULL,3}'::real[]), ('{{1,2},{3,4}}'::real[])) as arrays(value)`.execute(database.db);
    for (const form of forms.rows)
      expect(() => realArrayFromBinary(Buffer.from(form.binary, 'base64'))).toThrow(/one-dimensional/);
    const float8 = await sql<{ binary: string }>`
      select encode(array_send('{1,2}'::float8[]), 'base64') as binary`.execute(database.db);
    expect(() => realArrayFromBinary(Buffer.from(float8.rows[0]?.binary as string, 'base64'))).toThrow();
  });
});
