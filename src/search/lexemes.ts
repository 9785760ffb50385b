import { type Kysely, sql } from 'kysely';
import type { DatabaseSchema } from '../db/schema.js';

/**
 * Each word's lexemes in a text search configuration (none for a stop word, several for a
 * name the parser splits), in one statement: the stemming the index itself does.
 *
 * The words go in as one text, a word a line, and the lexemes come back as one text, a line
 * per word in the same order (its lexemes separated by spaces, neither of which a lexeme of a
 * one-line word holds): query expansion stems the 80,000 vector words with it as the first
 * searches after a start wait, and a text[] parameter and a row with a text[] per word cost
 * three times the database's CPU (360-390 against 120 ms in PGlite) and a row object each on
 * their way between threads (issue 35).
 */
export async function lexemesOf(
  db: Kysely<DatabaseSchema>,
  language: string,
  words: readonly string[],
): Promise<Map<string, string[]>> {
  const lexemes = new Map<string, string[]>();
  // A word holding a line break would split in two on the way in: stemmed on its own.
  const lines = words.filter((word) => !word.includes('\n'));
  if (lines.length > 0) {
    const result = await sql<{ lexemes: string | null }>`
      select string_agg(array_to_string(tsvector_to_array(to_tsvector(${language}::regconfig, word)), ' '), E'\n' order by line) as lexemes
      from string_to_table(${lines.join('\n')}, E'\n') with ordinality as words(word, line)`.execute(db);
    const found = (result.rows[0]?.lexemes ?? '').split('\n');
    lines.forEach((word, index) => {
      const line = found[index] ?? '';
      lexemes.set(word, line === '' ? [] : line.split(' '));
    });
  }
  for (const word of words) {
    if (!word.includes('\n')) continue;
    const result = await sql<{ lexemes: string[] }>`
      select tsvector_to_array(to_tsvector(${language}::regconfig, ${word})) as lexemes`.execute(db);
    lexemes.set(word, result.rows[0]?.lexemes ?? []);
  }
  return lexemes;
}
