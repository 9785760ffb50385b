/**
 * The synthetic corpus of bench:search and bench:hnsw-build: deterministic text, so that every
 * run of a bench indexes the same segments, and both benches index the same kind of text.
 */

import { seededRandom } from '../../test/helpers/near-tie-corpus.js';

/** The tests' deterministic generator: `seed` picks the corpus. */
export { seededRandom };

/** The common vocabulary of English segments, function words first. */
export const englishWords =
  `the of and to in is for with on as by at from that this it be are or an which can not
database table index query vacuum transaction lock replication backup server client connection role
schema column row function trigger view sequence partition statistics planner cost memory buffer disk
write ahead log checkpoint archive recovery standby primary timeline constraint foreign key unique check
running runs ran insert update delete select join aggregate window sort hash merge nested loop scan`.split(
    /\s+/,
  );

/** The common vocabulary of Norwegian segments, function words first. */
export const norwegianWords =
  `og det er som på en til av ikke med har vi de den for kan skal om fra også et så
bil bilen bilene vei veien hus huset båt båten tog toget by byen land landet fjell fjellet vann vannet
kjører kjørte kjøre bygger bygde bygge leser leste lese skriver skrev skrive`.split(/\s+/);

/** One segment of 40-79 words, or of `length` words (a query). */
export function syntheticText(
  next: () => number,
  words: readonly string[] = englishWords,
  length = 40 + Math.floor(next() * 40),
): string {
  const out: string[] = [];
  for (let index = 0; index < length; index++) {
    // Half the words from a small common vocabulary (function words first, Zipf-like), half
    // from a long tail of 50,000 rarer terms, as in real documentation.
    if (next() < 0.5) out.push(words[Math.floor(words.length * next() ** 2)] as string);
    else out.push(`term${Math.floor(50_000 * next() ** 1.5)}`);
  }
  return `${out.join(' ')}.`;
}
