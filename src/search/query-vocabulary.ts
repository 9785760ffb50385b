/**
 * The index's own vocabulary as evidence of a short query's language (issue 34). ELD's n-grams
 * need a 0.08 lead to name a query's language, and a short Norwegian sentence often falls just
 * short of it against Swedish or English ("slette en bruker som fortsatt eier tabeller": 0.06
 * over Swedish). Such a query then got no translation and only the index's English parse. Its
 * words say more: most of them are words the index does not hold in any other language it
 * has. So the language ELD scores first is taken at a lower lead when most of the query's
 * words are unknown to the index as parsed in each of the index's other languages, and the
 * language ELD scores next (outside the winner's group) is not one the index holds: on the dev
 * questions a Norwegian question with English names whose runner-up was English lost its
 * first-ranked page when taken as Norwegian (bench/questions/README.md).
 */
import { type Kysely, sql } from 'kysely';
import type { DatabaseSchema } from '../db/schema.js';
import type { SearchLanguage } from '../search-index/language.js';
import { detectionThresholds, type LanguageDetector } from '../search-index/language-detection.js';

/** At least this share of a query's words must be unknown in the index's other languages. */
export const unknownWordShare = 0.5;

/**
 * The query's language on ELD's lead and the index's vocabulary, for a query ELD alone does
 * not name; undefined when the evidence is not there. `indexLanguages` are the languages the
 * query is parsed in (text search configurations).
 */
export async function languageByVocabulary(
  db: Kysely<DatabaseSchema>,
  detector: LanguageDetector,
  query: string,
  indexLanguages: readonly string[],
): Promise<SearchLanguage | undefined> {
  const lead = detector.queryLead(query, indexLanguages);
  if (!lead || lead.margin < detectionThresholds.vocabularyQueryMargin) return undefined;
  // When ELD's runner-up is a language the index holds, a query mixing that language's words
  // (names, English terms) with another's is served by the index's own parse.
  if (lead.runnerUp && indexLanguages.includes(lead.runnerUp)) return undefined;
  const otherLanguages = indexLanguages.filter((language) => language !== lead.language);
  if (otherLanguages.length === 0) return undefined;
  // Names ("pg_dump", "utf8") are shared by every language: they are no evidence either way.
  const words = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [])].filter((word) =>
    /^\p{L}+$/u.test(word),
  );
  if (words.length < 2) return undefined;
  const unknown = await wordsUnknownToIndex(db, words, otherLanguages);
  return unknown / words.length >= unknownWordShare ? lead.language : undefined;
}

/**
 * How many of `words` are in none of `languages` as the index holds them: in a language a word
 * is known when it is one of its stop words or one of its lexemes is in some segment. One
 * statement.
 */
async function wordsUnknownToIndex(
  db: Kysely<DatabaseSchema>,
  words: readonly string[],
  languages: readonly string[],
): Promise<number> {
  const result = await sql<{ unknown: string }>`
    select count(*) as unknown
    from unnest(${[...words]}::text[]) as word
    where not exists (
      select 1
      from unnest(${[...languages]}::text[]) as language
      cross join lateral (select tsvector_to_array(to_tsvector(language::regconfig, word)) as lexemes) as parsed
      where cardinality(parsed.lexemes) = 0
        or exists (select 1 from knowledge_terms t where t.lexeme = any (parsed.lexemes) and t.segments > 0))`.execute(
    db,
  );
  return Number(result.rows[0]?.unknown ?? 0);
}
