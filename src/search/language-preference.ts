/**
 * The reader's language first: when the candidates hold the same page in several languages,
 * the copy in the query's language takes the best place any copy of that page holds.
 *
 * Two documents are copies of one page when their URLs (or source keys) are equal once a
 * language folder is taken out of the path: `/manual/nb/backup.html`, `/manual/da/backup.html`
 * and `/manual/en/backup.html` are one page. A language folder is a path segment that is an
 * ISO 639-1 code the index has a stemmer for, alone or with a region (`nb`, `nb-NO`, `en_us`;
 * language.ts). A result's language is its folder's, else its segment's detected language.
 *
 * Within each such page, the places its segments hold in the ranking are kept, and given
 * first to the segments in the query's language (in their order), then to the other copies'
 * (in theirs). No other result moves. The query's language is the request's `language`, else
 * the detected one (query-languages.ts); with neither, nothing changes.
 */
import { type SearchLanguage, toSearchLanguage } from '../search-index/language.js';

export interface LanguageCandidate {
  url: string | null;
  source_key: string;
  language: string | null;
}

interface PageCopy {
  /** The URL or source key with its language folder taken out. */
  page: string;
  language: SearchLanguage;
}

/** The page a URL or source key is a copy of, and its folder's language; undefined without a language folder. */
export function pageCopy(address: string): PageCopy | undefined {
  const [withoutQuery = ''] = address.split(/[?#]/);
  const schemeEnd = withoutQuery.indexOf('://');
  const pathStart = schemeEnd >= 0 ? withoutQuery.indexOf('/', schemeEnd + 3) : 0;
  if (pathStart < 0) return undefined;
  const segments = withoutQuery.slice(pathStart).split('/');
  for (const [index, segment] of segments.entries()) {
    if (!/^[a-z]{2}(?:[-_][a-z]{2})?$/i.test(segment)) continue;
    const language = toSearchLanguage(segment);
    if (!language) continue;
    const rest = [...segments.slice(0, index), ...segments.slice(index + 1)].join('/');
    return { page: `${withoutQuery.slice(0, pathStart)}${rest}`, language };
  }
  return undefined;
}

export function preferQueryLanguage<T extends LanguageCandidate>(
  candidates: readonly T[],
  queryLanguage: string | undefined,
): T[] {
  if (!queryLanguage) return [...candidates];
  const copies = candidates.map((candidate) => pageCopy(candidate.url ?? candidate.source_key));
  const places = new Map<string, number[]>();
  copies.forEach((copy, index) => {
    if (!copy) return;
    const held = places.get(copy.page) ?? [];
    held.push(index);
    places.set(copy.page, held);
  });
  const reordered = [...candidates];
  for (const held of places.values()) {
    const inLanguage = (index: number) =>
      (copies[index]?.language ?? candidates[index]?.language) === queryLanguage;
    const order = [...held.filter(inLanguage), ...held.filter((index) => !inLanguage(index))];
    held.forEach((place, position) => {
      reordered[place] = candidates[order[position] as number] as T;
    });
  }
  return reordered;
}
