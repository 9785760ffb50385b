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
  const folder = languageFolder(address);
  if (!folder) return undefined;
  const { path, index, pathStart } = folder;
  const rest = [...path.slice(0, index), ...path.slice(index + 1)].join('/');
  return { page: `${folder.base.slice(0, pathStart)}${rest}`, language: folder.language };
}

/** A document as search holds it: its address, and the page identity ingestion stored (pageIdentity). */
export interface CopyFields {
  url: string | null;
  source_key: string;
  /** Null for documents ingested before migration 20, or that are no copy of a page. */
  page_key?: string | null | undefined;
  page_language?: string | null | undefined;
}

/**
 * The page a document is a copy of and the copy's language: the identity stored at ingestion
 * (pageIdentity) when there is one, else the language folder of its address (pageCopy), which
 * is what documents ingested before the identity was stored (migration 20) are known by.
 * Search reads copies only through this (reader-copies.ts, language-preference.ts).
 */
export function copyOf(document: CopyFields): PageCopy | undefined {
  const language = toSearchLanguage(document.page_language);
  if (document.page_key && language) return { page: document.page_key, language };
  return pageCopy(document.url ?? document.source_key);
}

/**
 * The page identity stored with a document at ingestion: which page it is a copy of, and in
 * which language. A page that declares translations (`<link rel="alternate" hreflang>`,
 * `alternates`: code -> absolute URL; `x-default` aside) is keyed by its translation set: the least of the
 * set's addresses (its own included, each with a language folder taken out and without its
 * fragment), so every copy declaring the same set gets the same key whatever its URL
 * (`/help/a.html?lang=nb`, `nb.example.com/a`, `/a.nb.html`). The copy's language is the code
 * the set gives its own URL, else its folder's, else `language` (the document's). Without
 * alternates, the language folder of the address (pageCopy: `/manual/sv-SE/a.html` is the
 * Swedish copy of `/manual/a.html`); else none.
 */
export function pageIdentity(
  address: string,
  alternates: Readonly<Record<string, string>> | undefined,
  language: SearchLanguage | undefined,
): PageCopy | undefined {
  const own = withoutFragment(address);
  const folder = pageCopy(address);
  // `x-default` names a fallback (often one language picker for every page), not a copy.
  const coded = Object.entries(alternates ?? {}).filter(([code]) => code.toLowerCase() !== 'x-default');
  const declared = coded.filter(([, href]) => withoutFragment(href) !== own);
  if (declared.length > 0) {
    const self = coded.find(([code, href]) => withoutFragment(href) === own && toSearchLanguage(code));
    const copyLanguage = toSearchLanguage(self?.[0]) ?? folder?.language ?? language;
    if (copyLanguage && copyLanguage !== 'simple') {
      const keys = [own, ...declared.map(([, href]) => withoutFragment(href))].map(
        (href) => pageCopy(href)?.page ?? href,
      );
      return { page: keys.reduce((least, key) => (key < least ? key : least)), language: copyLanguage };
    }
  }
  return folder;
}

function withoutFragment(address: string): string {
  return address.split('#')[0] ?? '';
}

/**
 * The addresses the same page has in `language` (twins: the same path under another language
 * folder): the address without its query or fragment, its language folder replaced by each ISO
 * code of `language` (`no`, `nb` and `nn` for Norwegian). None without a language folder, or
 * when the folder is already in `language`. Regions are not guessed: a twin under `sv-SE/`
 * is not looked up, only one under `sv/`.
 */
export function twinAddresses(address: string, language: SearchLanguage): string[] {
  const folder = languageFolder(address);
  if (!folder || folder.language === language) return [];
  const { path, index, pathStart } = folder;
  return Object.entries(isoCodes)
    .filter(([, name]) => name === language)
    .map(([code]) => {
      const twin = [...path.slice(0, index), code, ...path.slice(index + 1)].join('/');
      return `${folder.base.slice(0, pathStart)}${twin}`;
    });
}

/** The first path segment of an address that is a language folder, and where it is. */
function languageFolder(address: string) {
  const [base = ''] = address.split(/[?#]/);
  const schemeEnd = base.indexOf('://');
  const pathStart = schemeEnd >= 0 ? base.indexOf('/', schemeEnd + 3) : 0;
  if (pathStart < 0) return undefined;
  const path = base.slice(pathStart).split('/');
  for (const [index, segment] of path.entries()) {
    if (!/^[a-z]{2}(?:[-_][a-z]{2})?$/i.test(segment)) continue;
    const language = toSearchLanguage(segment);
    if (language) return { base, pathStart, path, index, language };
  }
  return undefined;
}
