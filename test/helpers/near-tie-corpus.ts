/**
 * The corpus of the vector-ranking tests: deterministic segments of 30 words from a 40-word
 * vocabulary, so that every run writes the same text and every query has many near ties.
 */

/** A deterministic pseudo-random generator (a linear congruential one): `seed` picks the corpus. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const vocabulary = `vacuum index table query lock replication backup server client role schema column
row function trigger view sequence partition statistics planner memory buffer checkpoint archive
recovery standby primary constraint join aggregate window sort hash merge scan analyze cluster`.split(/\s+/);

/** One segment's text: 30 words of the vocabulary. */
export function nearTieText(next: () => number): string {
  return Array.from({ length: 30 }, () => vocabulary[Math.floor(next() * vocabulary.length)]).join(' ');
}
