/**
 * The analyzer a search engine gives English text out of the box, for the bench:quality
 * baseline and the corpus LSA's terms (lsa-model.ts): Lucene's EnglishAnalyzer, which Elasticsearch's `english` analyzer rebuilds
 * (standard tokenizer, English possessive filter, lower case, English stop words, Porter
 * stemmer). The stemmer is the npm package `stemmer` (Martin Porter's original algorithm, as
 * Lucene's PorterStemFilter implements it).
 */
import { stemmer } from 'stemmer';

/**
 * Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, which Elasticsearch's `_english_` stop list
 * copies: the 33 words a default English analyzer drops.
 */
export const englishStopWords: ReadonlySet<string> = new Set([
  'a',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'but',
  'by',
  'for',
  'if',
  'in',
  'into',
  'is',
  'it',
  'no',
  'not',
  'of',
  'on',
  'or',
  'such',
  'that',
  'the',
  'their',
  'then',
  'there',
  'these',
  'they',
  'this',
  'to',
  'was',
  'will',
  'with',
]);

/**
 * Words as Unicode's word boundaries (UAX #29, Lucene's StandardTokenizer) cut them in the text
 * of a manual: letters, digits and underscores, joined through an inner apostrophe or full stop
 * ("pg_dump", "postgresql.conf", "don't" and "9.6" stay whole; a sentence's final stop does not).
 */
const wordPattern = /[\p{L}\p{M}\p{N}_]+(?:['’.][\p{L}\p{M}\p{N}_]+)*/gu;

export function tokenizeEnglish(text: string): string[] {
  return text.match(wordPattern) ?? [];
}

/**
 * One token through the filters in Lucene's order: the possessive "'s" dropped, lower case,
 * stop words dropped (null), then the Porter stem (of every token, "pg_settings" included, as
 * PorterStemFilter does).
 */
export function analyzeEnglishTerm(token: string): string | null {
  const term = token.replace(/['’][sS]$/, '').toLowerCase();
  if (term.length === 0 || englishStopWords.has(term)) return null;
  return stemmer(term);
}

/** The analyzer over a whole text: what the index and the query both see. */
export function analyzeEnglish(text: string): string[] {
  return tokenizeEnglish(text)
    .map(analyzeEnglishTerm)
    .filter((term): term is string => term !== null);
}
