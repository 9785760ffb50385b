/**
 * Languages of the knowledge index. A language is named by its PostgreSQL text search
 * configuration (`english`, `norwegian`, ...), which picks the stemmer for both the indexed
 * segment and the query, so "bilene" finds "bil" and "running" finds "run".
 * Detection is in language-detection.ts.
 */

/** Text search configurations shipped with PostgreSQL (and PGlite) that the index accepts. */
export const searchLanguages = [
  'simple',
  'danish',
  'dutch',
  'english',
  'finnish',
  'french',
  'german',
  'italian',
  'norwegian',
  'portuguese',
  'spanish',
  'swedish',
] as const;

export type SearchLanguage = (typeof searchLanguages)[number];

const isoCodes: Record<string, SearchLanguage> = {
  da: 'danish',
  nl: 'dutch',
  en: 'english',
  fi: 'finnish',
  fr: 'french',
  de: 'german',
  it: 'italian',
  no: 'norwegian',
  nb: 'norwegian',
  nn: 'norwegian',
  pt: 'portuguese',
  es: 'spanish',
  sv: 'swedish',
};

/**
 * A language given as an ISO 639-1 code (`en`, `nb`, `en-US`) or a configuration name
 * (`english`); undefined when it names none the index supports.
 */
export function toSearchLanguage(value: string | undefined | null): SearchLanguage | undefined {
  if (!value) return undefined;
  const lowered = value.trim().toLowerCase();
  if ((searchLanguages as readonly string[]).includes(lowered)) return lowered as SearchLanguage;
  const primary = lowered.split(/[-_]/)[0] ?? '';
  return isoCodes[primary];
}

/** The ISO 639-1 code of a configuration (`norwegian` -> `no`); undefined for `simple`. */
export function isoCodeOf(language: SearchLanguage): string | undefined {
  for (const [code, name] of Object.entries(isoCodes)) if (name === language) return code;
  return undefined;
}

export interface PageCopy {
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
