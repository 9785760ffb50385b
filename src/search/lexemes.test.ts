import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTargets, type TestDatabase } from '../../test/helpers/databases.js';
import { lexemesOf } from './lexemes.js';

/** Words whose lexemes differ in kind: stems, stop words, names the parser splits, phrases, odd characters. */
const words = [
  'running',
  'the',
  'databases',
  'e-mail',
  'co-operation',
  'old row versions',
  '',
  ' ',
  'x86_64',
  '3.14',
  'user@example.com',
  '/usr/local/bin',
  'naïve',
  'running',
  'line\nbreak',
  'tab\there',
  "o'clock",
  'ΑΘΗΝΑ',
];

describe.each(databaseTargets())('lexemesOf on $name', (target) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await target.open();
  });
  afterAll(async () => {
    await database.close();
  });

  it("gives each word the lexemes of a statement per word (the index's own stemming)", async () => {
    const found = await lexemesOf(database.db, 'english', words);
    for (const word of words) {
      const alone = await sql<{ lexemes: string[] }>`
        select tsvector_to_array(to_tsvector('english'::regconfig, ${word})) as lexemes`.execute(database.db);
      expect([word, found.get(word)]).toEqual([word, alone.rows[0]?.lexemes]);
    }
    expect(found.size).toBe(new Set(words).size);
  });

  it('answers an empty list without a statement, and a list of one empty word', async () => {
    expect((await lexemesOf(database.db, 'english', [])).size).toBe(0);
    expect([...(await lexemesOf(database.db, 'english', ['']))]).toEqual([['', []]]);
  });
});
