/**
 * The reader's language first, and one page once: when the candidates hold the same page in
 * several languages, the page is shown in one copy, the reader's, at the best place any copy
 * holds, and its other copies go below every other result.
 *
 * Two documents are copies of one page when they have the same page key (search-index/
 * language.ts, copyOf): pages that declare each other as translations (`<link rel=alternate
 * hreflang>`), or whose URLs (or source keys) are equal once a language folder is taken out of
 * the path: `/manual/nb/backup.html`, `/manual/da/backup.html` and `/manual/en-US/backup.html`
 * are one page. A language folder is a path segment that is an ISO 639-1 code the index has a
 * stemmer for, alone or with a region (`nb`, `nb-NO`, `en_us`). A copy's language is the one its
 * hreflang set or folder gives it, else its segment's detected language.
 *
 * Which copy is the reader's: the first, in ranking order, of those in the query's language;
 * else of those whose text is in their folder's language (the page as its translators wrote
 * it, not a copy left untranslated: an English text under `da/` is a placeholder for the
 * Danish page); else the first. A question whose language is not detected (the request's
 * `language`, else query-languages.ts) is served by the second rule: a short keyword query
 * matching English text gets the `en/` copy, not the untranslated `sv/` one that happened to
 * rank first. The reader's copy's segments take the page's places in the ranking, in their
 * order; the places left over are given up, and the other copies' segments follow every other
 * result, in their order. So a page in four languages no longer fills four places of the first
 * ten. Results that are no copy of a page never move.
 */
import { type CopyFields, copyOf, pageCopy } from '../search-index/language.js';

export { pageCopy };

export interface LanguageCandidate extends CopyFields {
  language: string | null;
}

export function preferQueryLanguage<T extends LanguageCandidate>(
  candidates: readonly T[],
  queryLanguage: string | undefined,
): T[] {
  const copies = candidates.map(copyOf);
  const places = new Map<string, number[]>();
  copies.forEach((copy, index) => {
    if (!copy) return;
    const held = places.get(copy.page) ?? [];
    held.push(index);
    places.set(copy.page, held);
  });
  // 0: in the query's language; 1: text in its folder's language; 2: any other copy.
  const preference = (index: number) => {
    const folder = copies[index]?.language;
    if (queryLanguage && (folder ?? candidates[index]?.language) === queryLanguage) return 0;
    return folder !== undefined && folder === candidates[index]?.language ? 1 : 2;
  };
  const placed: (T | undefined)[] = [...candidates];
  const below: number[] = [];
  for (const held of places.values()) {
    const best = [...held].sort((a, b) => preference(a) - preference(b) || a - b)[0] as number;
    const reader = documentOf(candidates[best] as T);
    const own = held.filter((index) => documentOf(candidates[index] as T) === reader);
    held.forEach((place, position) => {
      placed[place] = position < own.length ? candidates[own[position] as number] : undefined;
    });
    below.push(...held.filter((index) => documentOf(candidates[index] as T) !== reader));
  }
  return [
    ...placed.filter((candidate) => candidate !== undefined),
    ...below.sort((a, b) => a - b).map((index) => candidates[index] as T),
  ];
}

/** The document a candidate belongs to: its URL (or source key) without a fragment. */
function documentOf(candidate: LanguageCandidate): string {
  return (candidate.url ?? candidate.source_key).split('#')[0] ?? '';
}
