/**
 * How many of a corpus's sources use each word: a word (most) every source uses is the
 * corpus's subject or its filler ("bee" on 13 of 16 beekeeping pages, "key" and "limit" on every
 * docs page), not one source's concept. Concept detection weighs single-word candidates down by
 * it (see keyphrases.ts); multi-word phrases are specific enough without it.
 *
 * Counted over the sources concept_detection loads in one run, when they are enough to speak
 * for the corpus (`minDocuments`), and kept in the concept map (`corpus_words`), so a later
 * run that detects only a few changed sources weighs words as the first run did.
 */
import { normalisedName, wordsOf } from './concept-names.js';
import type { LoadedSource } from './sources.js';

export interface CorpusWords {
  /** Sources counted. */
  documents: number;
  /** Normalised word -> sources using it; only words in at least `keptShare` of them. */
  counts: Record<string, number>;
}

export const corpusWordDefaults = {
  /** Fewer sources than this say nothing about the corpus. */
  minDocuments: 10,
  /** Words rarer than this share are not kept (they weigh nothing down). */
  keptShare: 0.2,
  /** A single word in this share of the sources or more is no concept of one of them. */
  subjectShare: 0.75,
} as const;

/** The words of `sources` in at least `keptShare` of them; undefined for too few sources. */
export function corpusWordsOf(sources: readonly Pick<LoadedSource, 'markdown'>[]): CorpusWords | undefined {
  if (sources.length < corpusWordDefaults.minDocuments) return undefined;
  const counts = new Map<string, number>();
  for (const source of sources)
    for (const word of new Set(wordsOf(source.markdown).map((found) => normalisedName(found))))
      counts.set(word, (counts.get(word) ?? 0) + 1);
  const kept: Record<string, number> = {};
  const least = corpusWordDefaults.keptShare * sources.length;
  for (const [word, count] of [...counts].sort((a, b) => a[0].localeCompare(b[0])))
    if (count >= least) kept[word] = count;
  return { documents: sources.length, counts: kept };
}

/** Share of the corpus's sources using the word `key` (a normalised name); 0 when unknown. */
export function corpusShareOf(corpus: CorpusWords | undefined, key: string): number {
  if (!corpus || corpus.documents === 0) return 0;
  return (corpus.counts[key] ?? 0) / corpus.documents;
}

/** Whether a stored value is a CorpusWords (read from a map or detections object). */
export function isCorpusWords(value: unknown): value is CorpusWords {
  const candidate = value as CorpusWords | undefined;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.documents === 'number' &&
    typeof candidate.counts === 'object' &&
    candidate.counts !== null
  );
}
