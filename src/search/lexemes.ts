import { type Kysely, sql } from 'kysely';
import type { DatabaseSchema } from '../db/schema.js';

/**
 * Each word's lexemes in a text search configuration (none for a stop word, several for a
 * name the parser splits), in one statement: the stemming the index itself does.
 */
export async function lexemesOf(
  db: Kysely<DatabaseSchema>,
  language: string,
  words: readonly string[],
): Promise<Map<string, string[]>> {
  const result = await sql<{ word: string; lexemes: string[] }>`
    select word, tsvector_to_array(to_tsvector(${language}::regconfig, word)) as lexemes
    from unnest(${[...words]}::text[]) as word`.execute(db);
  return new Map(result.rows.map((row) => [row.word, row.lexemes]));
}
