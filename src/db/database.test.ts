import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTargets } from '../../test/helpers/databases.js';
import {
  byteaArray,
  float8Array,
  int4Array,
  realArray,
  textArray,
  timestamptzArray,
  uuidArray,
} from './array-parameter.js';
import type { Database } from './database.js';
import { describeUrl, openDatabase } from './database.js';
import { migrateToLatest } from './migrate.js';
import { migrations } from './migrations/index.js';

const targets = [
  ...databaseTargets(),
  // The service's default with a data dir: PGlite on a worker thread (here in memory).
  { name: 'pglite on its own thread', open: () => openDatabase({ pgliteThread: 'worker' }) },
];

describe('PGlite thread with statement timing (benchmarks)', () => {
  it('counts and times each statement text', async () => {
    const database = await openDatabase({ pgliteThread: 'worker', timeStatements: true, migrate: false });
    try {
      for (let index = 0; index < 3; index++) await sql`select ${index}::int as n`.execute(database.db);
      const times = (await database.statementTimes?.()) ?? [];
      const select = times.find((time) => time.statement === 'select $1::int as n');
      expect(select?.count).toBe(3);
      expect(select?.milliseconds).toBeGreaterThan(0);
    } finally {
      await database.close();
    }
  });
});

describe.skipIf(!process.env.DATABASE_URL)('PostgreSQL server with statement timing (benchmarks)', () => {
  it('counts and times each statement text, as the caller waits for it', async () => {
    const database = await openDatabase({
      url: process.env.DATABASE_URL,
      timeStatements: true,
      migrate: false,
    });
    try {
      for (let index = 0; index < 3; index++)
        await sql`select ${index}::int as n, pg_sleep(0.01)`.execute(database.db);
      const times = (await database.statementTimes?.()) ?? [];
      const select = times.find((time) => time.statement === 'select $1::int as n, pg_sleep(0.01)');
      expect(select?.count).toBe(3);
      expect(select?.milliseconds).toBeGreaterThanOrEqual(30);
    } finally {
      await database.close();
    }
  });
});

describe.each(targets)('database port on $name', (target) => {
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

  it('writes array parameters exactly (in binary on both drivers)', async () => {
    await sql`create table array_probe (id int primary key, reals real[] not null)`.execute(database.db);
    const vectors = [
      Float32Array.from([0.5, -1, 2e-7, 3.4028234663852886e38, -0]),
      Float32Array.from(Array.from({ length: 384 }, (_, index) => Math.sin(index) / (index + 1))),
      [1.25, Number.NaN, Number.POSITIVE_INFINITY],
    ];
    await sql`insert into array_probe values ${sql.join(
      vectors.map((vector, index) => sql`(${index}, ${realArray(vector)})`),
    )}`.execute(database.db);
    const reals = await sql<{ reals: number[] }>`select reals from array_probe order by id`.execute(
      database.db,
    );
    // What went in as float4 comes back as the same float4 values, element for element.
    expect(reals.rows.map((row) => Array.from(Float32Array.from(row.reals)))).toEqual(
      vectors.map((vector) => Array.from(Float32Array.from(vector))),
    );
    await sql`drop table array_probe`.execute(database.db);

    const ids = [
      '018f0c8e-1b2c-7d3e-8f40-123456789abc',
      null,
      '00000000-0000-0000-0000-000000000000',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
    ];
    // Control characters, and a text given as its UTF-8 bytes (webhook bodies are).
    const texts = [
      'plain',
      'quote " backslash \\ comma, {braces} NULL',
      null,
      'æøå 漢字 🚀 line\nbreak\ttab',
    ];
    const textParameters = [texts[0] ?? null, texts[1] ?? null, null, Buffer.from(texts[3] ?? '', 'utf8')];
    const blobs = [
      new Uint8Array([0, 1, 2, 255]),
      new Uint8Array(0),
      new Uint8Array([92, 34, 120]),
      new Uint8Array([9]),
    ];
    const rows = await sql<{ id: string | null; label: string | null; blob: Uint8Array }>`
      select * from unnest(${uuidArray(ids)}::uuid[], ${textArray(textParameters)}::text[], ${byteaArray(blobs)}::bytea[])
        as v (id, label, blob)`.execute(database.db);
    expect(rows.rows.map((row) => row.id)).toEqual(ids);
    expect(rows.rows.map((row) => row.label)).toEqual(texts);
    expect(rows.rows.map((row) => Array.from(row.blob))).toEqual(blobs.map((blob) => Array.from(blob)));
    // Big enough to own its memory, which is moved to a PGlite thread rather than copied; the
    // same query twice (each run makes its own binary form).
    const long = sql<{ length: number }>`
      select length(t) as length from unnest(${textArray(['x'.repeat(5000), 'y'.repeat(3000)])}::text[]) as t`;
    for (let round = 0; round < 2; round++)
      expect((await long.execute(database.db)).rows.map((row) => row.length)).toEqual([5000, 3000]);

    const numbers = [0, -1, 2_147_483_647, -2_147_483_648, null, 7, 8];
    const times = [
      new Date('2026-11-23T13:37:00.123Z'),
      new Date('1999-12-31T23:59:59.999Z'), // before Postgres's epoch: a negative count
      new Date('1970-01-01T00:00:00.000Z'),
      null,
      new Date('2262-04-11T23:47:16.854Z'),
      new Date('9999-12-31T23:59:59.999Z'), // past 2^53 microseconds: written as a BigInt
      new Date('0001-01-01T00:00:00.001Z'),
    ];
    // Read back as epoch milliseconds: PGlite's own parser reads year 0001 as 2001.
    const typed = await sql<{ number: number | null; milliseconds: number | null }>`
      select number, (extract(epoch from time) * 1000)::float8 as milliseconds
      from unnest(${int4Array(numbers)}::int4[], ${timestamptzArray(times)}::timestamptz[])
        as v (number, time)`.execute(database.db);
    expect(typed.rows.map((row) => row.number)).toEqual(numbers);
    // float8 bit for bit: the in-memory keyword ranking hands its scores to SQL this way.
    const doubles = [16.442003677328533, 0.1, 1 / 3, -0, 2 ** -1074, Number.MAX_VALUE, -1e300];
    const read = await sql<{ bits: string }>`
      select float8send(value)::text as bits from unnest(${float8Array(doubles)}::float8[]) as value`.execute(
      database.db,
    );
    expect(read.rows.map((row) => row.bits)).toEqual(
      doubles.map((value) => {
        const bytes = Buffer.alloc(8);
        bytes.writeDoubleBE(value);
        return `\\x${bytes.toString('hex')}`;
      }),
    );
    expect(typed.rows.map((row) => (row.milliseconds === null ? null : Number(row.milliseconds)))).toEqual(
      times.map((time) => time?.getTime() ?? null),
    );
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

  it('keeps statements issued during a transaction out of it, and its own in it', async () => {
    await sql`create table pipelined (id int primary key)`.execute(database.db);
    let outside: Promise<unknown> | undefined;
    await expect(
      database.db.transaction().execute(async (transaction) => {
        await sql`insert into pipelined values (1)`.execute(transaction);
        outside = sql`insert into pipelined values (2)`.execute(database.db);
        await sql`insert into pipelined values (3)`.execute(transaction);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await outside;
    const rows = await sql<{ id: number }>`select id from pipelined order by id`.execute(database.db);
    expect(rows.rows.map((row) => row.id)).toEqual([2]);
    await sql`drop table pipelined`.execute(database.db);
  });

  it('reports a failed statement with its SQLSTATE and detail, and goes on', async () => {
    await sql`create table unique_probe (id int primary key)`.execute(database.db);
    await sql`insert into unique_probe values (1)`.execute(database.db);
    const failure = await sql`insert into unique_probe values (1)`
      .execute(database.db)
      .catch((error) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(failure).toMatchObject({ code: '23505', constraint: 'unique_probe_pkey' });
    expect(String(failure.detail)).toContain('(id)=(1)');
    await sql`drop table unique_probe`.execute(database.db);
  });

  it('round-trips bytea, timestamptz, arrays and jsonb', async () => {
    const bytes = Uint8Array.from([0, 1, 2, 250, 255]);
    const at = new Date('2026-01-02T03:04:05.678Z');
    const result = await sql<{ b: Uint8Array; t: Date; a: string[]; j: unknown }>`
      select ${bytes}::bytea as b, ${at.toISOString()}::timestamptz as t,
             ${['x', null, 'z']}::text[] as a, ${JSON.stringify({ k: [1, 'two'] })}::jsonb as j`.execute(
      database.db,
    );
    const row = result.rows[0];
    expect([...(row?.b ?? [])]).toEqual([...bytes]);
    expect(row?.t.getTime()).toBe(at.getTime());
    expect(row?.a).toEqual(['x', null, 'z']);
    expect(row?.j).toEqual({ k: [1, 'two'] });
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
