/**
 * Languages of the knowledge index. A language is named by its PostgreSQL text search
 * configuration (`english`, `norwegian`, ...), which picks the stemmer for both the indexed
 * segment and the query, so "bilene" finds "bil" and "running" finds "run".
 *
 * Detection counts common function words: cheap, deterministic, and good enough to pick a
 * stemmer for a paragraph. Text with too few signals falls back to `simple` (no stemming).
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

const functionWords: Record<Exclude<SearchLanguage, 'simple'>, readonly string[]> = {
  english: [
    'the',
    'and',
    'of',
    'to',
    'is',
    'in',
    'that',
    'it',
    'for',
    'with',
    'are',
    'this',
    'be',
    'or',
    'which',
    'from',
    'by',
    'can',
    'not',
    'an',
    'how',
    'what',
    'does',
  ],
  norwegian: [
    'og',
    'det',
    'er',
    'som',
    'på',
    'en',
    'til',
    'av',
    'ikke',
    'med',
    'har',
    'jeg',
    'vi',
    'de',
    'den',
    'for',
    'kan',
    'skal',
    'om',
    'hva',
    'hvordan',
    'ble',
    'eller',
    'fra',
    'ved',
    'også',
    'et',
    'så',
  ],
  danish: [
    'og',
    'det',
    'er',
    'af',
    'ikke',
    'til',
    'med',
    'har',
    'jeg',
    'vi',
    'de',
    'den',
    'kan',
    'skal',
    'hvad',
    'hvordan',
    'blev',
    'eller',
    'fra',
    'også',
    'et',
    'så',
    'ud',
    'nogle',
    'efter',
  ],
  swedish: [
    'och',
    'det',
    'är',
    'som',
    'på',
    'en',
    'till',
    'av',
    'inte',
    'med',
    'har',
    'jag',
    'vi',
    'de',
    'den',
    'för',
    'kan',
    'ska',
    'om',
    'vad',
    'hur',
    'blev',
    'eller',
    'från',
    'också',
    'ett',
    'så',
  ],
  german: [
    'der',
    'die',
    'und',
    'das',
    'ist',
    'nicht',
    'mit',
    'von',
    'zu',
    'den',
    'ein',
    'eine',
    'auf',
    'für',
    'sich',
    'dem',
    'wie',
    'auch',
    'oder',
    'wird',
    'werden',
  ],
  dutch: [
    'de',
    'het',
    'een',
    'en',
    'van',
    'niet',
    'met',
    'zijn',
    'op',
    'voor',
    'dat',
    'die',
    'ook',
    'wordt',
    'kan',
    'naar',
    'bij',
  ],
  french: [
    'le',
    'la',
    'les',
    'et',
    'des',
    'est',
    'une',
    'un',
    'du',
    'pas',
    'pour',
    'dans',
    'que',
    'qui',
    'sur',
    'avec',
    'ce',
    'au',
    'ne',
    'sont',
  ],
  spanish: [
    'el',
    'la',
    'los',
    'las',
    'y',
    'es',
    'una',
    'un',
    'del',
    'no',
    'para',
    'en',
    'que',
    'por',
    'con',
    'se',
    'su',
    'al',
    'como',
    'más',
  ],
  italian: [
    'il',
    'la',
    'le',
    'e',
    'di',
    'è',
    'una',
    'un',
    'del',
    'non',
    'per',
    'che',
    'con',
    'sono',
    'della',
    'gli',
    'come',
    'anche',
  ],
  portuguese: [
    'o',
    'a',
    'os',
    'as',
    'e',
    'é',
    'uma',
    'um',
    'do',
    'da',
    'não',
    'para',
    'que',
    'com',
    'em',
    'por',
    'mais',
    'como',
    'são',
  ],
  finnish: [
    'ja',
    'on',
    'ei',
    'se',
    'että',
    'oli',
    'kun',
    'mutta',
    'myös',
    'tai',
    'ovat',
    'joka',
    'hän',
    'niin',
    'kuin',
    'mitä',
    'miten',
  ],
};

const wordLists = Object.entries(functionWords).map(
  ([language, words]) => [language as SearchLanguage, new Set(words)] as const,
);

/** Letters typical of one language family, a tie-breaker between the Scandinavian ones. */
const letterHints: ReadonlyArray<readonly [SearchLanguage, RegExp]> = [
  ['norwegian', /[øæå]/g],
  ['danish', /[øæå]/g],
  ['swedish', /[äöå]/g],
  ['german', /[äöüß]/g],
];

/**
 * The most likely language of `text` among `searchLanguages`, or `fallback` when fewer than
 * two function words were recognised (short queries, code, tables of numbers).
 */
export function detectLanguage(text: string, fallback: SearchLanguage = 'simple'): SearchLanguage {
  const words =
    text
      .toLowerCase()
      .match(/\p{L}+/gu)
      ?.slice(0, 2000) ?? [];
  const scores = new Map<SearchLanguage, number>();
  for (const word of words) {
    for (const [language, list] of wordLists) {
      if (list.has(word)) scores.set(language, (scores.get(language) ?? 0) + 1);
    }
  }
  const sample = text.slice(0, 20_000).toLowerCase();
  for (const [language, pattern] of letterHints) {
    const hits = sample.match(pattern)?.length ?? 0;
    if (hits > 0 && scores.has(language))
      scores.set(language, (scores.get(language) ?? 0) + Math.min(hits, 5) * 0.5);
  }
  let best: SearchLanguage = fallback;
  let bestScore = 1.5;
  for (const [language, score] of scores) {
    if (score > bestScore) {
      best = language;
      bestScore = score;
    }
  }
  return best;
}
