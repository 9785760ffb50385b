import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  byteaArray,
  int4Array,
  realArray,
  textArray,
  timestamptzArray,
  uuidArray,
} from '../src/db/array-parameter.js';
import type { Database } from '../src/db/database.js';
import { databaseTargets } from './helpers/databases.js';

// Binary array parameters reach both drivers' servers intact (PGlite, and node-postgres
// sending them as binary-format parameters).
describe.each(databaseTargets())('array parameters on $name', (target) => {
  let database: Database;
  beforeAll(async () => {
    database = await target.open();
  });
  afterAll(async () => {
    await database.close();
  });

  it('carries text as it is: quotes, backslashes, braces, control characters, emoji, NULL', async () => {
    const values = [
      'plain',
      'say "hi"',
      'back\\slash',
      '{a,b}',
      'line\nbreak\ttab',
      'emoji 😀',
      '',
      'NULL',
      null,
    ];
    const { rows } = await sql<{
      value: Array<string | null>;
    }>`select ${textArray(values)}::text[] as value`.execute(database.db);
    expect(rows[0]?.value).toEqual(values);
  });

  it('carries uuids, integers with nulls, timestamps, reals and bytes', async () => {
    const uuid = '0190a5c4-8f3e-7b2a-9c1d-2e3f4a5b6c7d';
    const when = new Date('2031-02-03T04:05:06.789Z');
    const { rows } = await sql<{
      uuids: string[];
      integers: Array<number | null>;
      times: Date[];
      reals: number[];
      bytes: Buffer[];
    }>`select ${uuidArray([uuid])}::uuid[] as uuids, ${int4Array([1, null, -7])}::integer[] as integers,
              ${timestamptzArray([when])}::timestamptz[] as times, ${realArray([0.5, -2])}::real[] as reals,
              ${byteaArray([Buffer.from([0, 255, 16])])}::bytea[] as bytes`.execute(database.db);
    const row = rows[0];
    expect(row?.uuids).toEqual([uuid]);
    expect(row?.integers).toEqual([1, null, -7]);
    expect(row?.times.map((time) => new Date(time).getTime())).toEqual([when.getTime()]);
    expect(row?.reals.map(Number)).toEqual([0.5, -2]);
    expect(row?.bytes.map((bytes) => [...Buffer.from(bytes)])).toEqual([[0, 255, 16]]);
  });
});
