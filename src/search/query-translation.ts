/**
 * Query translation for cross-language keyword search: a Norwegian question over English
 * pages is searched with the English words a bilingual glossary gives for its words.
 * "Hvordan lager jeg en indeks uten å blokkere skriving til tabellen?" then looks for
 * "create", "index", "block", "write" and "table", where the Norwegian words alone match
 * nothing, or worse, match a rare English token ("lager") on an unrelated page.
 *
 * A glossary is a TSV file, `<source word>\t<target word>[,<target word>...]`, targets most
 * likely first (data/glossaries/; docs/search-and-chat.md says how it was made). Its targets
 * are stemmed with the index's stemmer when it is first used. A glossary word is found in
 * its inflections by spelling (`inflectionalEndings`: "tabellene" is "tabell" + "ene"). A
 * compound that neither the glossary nor the index knows is split into two known parts
 * ("hovedversjon" -> "hoved" + "versjon"; a linking s or e is dropped), where a part is
 * known when the glossary has it or the index has it as an English word.
 *
 * A word's first translation counts as one of the query's own words; its alternatives count
 * `alternativeWeight`. Words the glossary does not know ("jsonb", "GIN") and names the parser
 * splits ("pg_dump") come back as `untranslated`, for the English parse of the query.
 */
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { type Kysely, sql } from 'kysely';
import type { DatabaseSchema } from '../db/schema.js';
import { packagePath } from '../runtime/package-root.js';
import type { SearchLanguage } from '../search-index/language.js';
import { lexemesOf } from './lexemes.js';

export const translationDefaults = {
  /** A word's first translation counts this share of a query word. */
  weight: 1,
  /** A target after a word's first counts this share of a query word. */
  alternativeWeight: 0.5,
  /** Parts of a split compound are at least this long. */
  minimumPartLength: 3,
  /**
   * Longer words are not split: a compound of two words is rarely longer, and a 2,000-letter
   * "word" would otherwise send 4,000 pieces of up to 2,000 letters to the stemmers.
   */
  maximumSplitLength: 40,
  /**
   * A word the index holds in this many segments as a target-language word is read as that
   * word ("server", "tree"): only a glossary entry written exactly so translates it, never a
   * guessed inflection ("tree" is not "tre", three) or a split ("ser" + "ver").
   */
  commonTargetSegments: 20,
} as const;

export type TranslationOptions = { [key in keyof typeof translationDefaults]: number };

export interface Glossary {
  /** Source word -> target words, most likely first. */
  entries: ReadonlyMap<string, readonly string[]>;
}

export interface Translation {
  /** The target-language lexeme searched for. */
  lexeme: string;
  weight: number;
  /** The query word it translates. */
  from: string;
}

export interface TranslatedQuery {
  translations: Translation[];
  /** The query's words the glossary did not translate, in order, for the target-language parse. */
  untranslated: string;
}

export interface QueryTranslator {
  /** The glossary's source and target languages. */
  readonly from: SearchLanguage;
  readonly to: SearchLanguage;
  translate(query: string): Promise<TranslatedQuery>;
}

export const builtInGlossaries: readonly { from: SearchLanguage; to: SearchLanguage; file: URL }[] = [
  {
    from: 'norwegian',
    to: 'english',
    file: pathToFileURL(packagePath('data/glossaries/nb-en.tsv')),
  },
];

/** A translator per built-in glossary; each reads and stems its glossary on first use. */
export function builtInTranslators(
  db: Kysely<DatabaseSchema>,
  options?: Partial<TranslationOptions>,
): QueryTranslator[] {
  return builtInGlossaries.map(({ from, to, file }) =>
    createQueryTranslator({ db, from, to, glossary: () => loadGlossary(file), options }),
  );
}

/** Parses a glossary file's text; a line without a tab or with no target is skipped. */
export function parseGlossary(text: string): Glossary {
  const entries = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const [source, targets] = line.split('\t');
    const word = source?.trim().toLowerCase();
    if (!word || !targets || word.startsWith('#')) continue;
    const list = entries.get(word) ?? [];
    for (const target of targets.split(',')) {
      const cleaned = target.trim().toLowerCase();
      if (cleaned && !list.includes(cleaned)) list.push(cleaned);
    }
    if (list.length > 0) entries.set(word, list);
  }
  return { entries };
}

export async function loadGlossary(file: URL | string): Promise<Glossary> {
  return parseGlossary(await readFile(file, 'utf8'));
}

/** A glossary with its targets stemmed: the target lexemes of each target word, in order. */
interface StemmedGlossary {
  /** Endings of the source language's inflections (see `inflectionalEndings`), if known. */
  endings: readonly string[] | undefined;
  /** By the source word as written. */
  byWord: Map<string, string[][]>;
  /** By the source word's lexeme: for a language without a list of endings. */
  byLexeme: Map<string, string[][]>;
}

/**
 * Endings that make another form of the same word, by source language, for finding a
 * glossary word from its inflections by spelling: "tabellene" is "tabell" + "ene",
 * "rettigheter" is "rettighet" + "er", and "sletter" is "slette" without its e, + "er". The
 * stemmer is no good for this: it also strips endings that make other words, so "billig"
 * (cheap) and "bilene" (the cars) are both "bil", and "rettighet" (privilege) and "rett"
 * (right) are both "rett". A language without a list finds glossary words by their lexemes.
 */
const inflectionalEndings: Partial<Record<SearchLanguage, readonly string[]>> = {
  norwegian: [
    '',
    'a',
    'e',
    'r',
    's',
    't',
    'ar',
    'de',
    'en',
    'er',
    'es',
    'et',
    'ne',
    'te',
    'ane',
    'ast',
    'dde',
    'ene',
    'ere',
    'est',
    'este',
  ],
};

/**
 * A word's translations: those of every glossary word it is a form of, each with its own
 * first translation ("lager" is the noun, storage, and a form of the verb "lage", to make).
 */
function lookup(
  glossary: StemmedGlossary,
  word: string,
  lexeme: string,
  exactOnly = false,
): string[][][] | undefined {
  if (exactOnly) {
    const found = glossary.byWord.get(word);
    return found ? [found] : undefined;
  }
  if (!glossary.endings) {
    const found = glossary.byWord.get(word) ?? glossary.byLexeme.get(lexeme);
    return found ? [found] : undefined;
  }
  const groups = new Set<string[][]>();
  for (const ending of glossary.endings) {
    if (!word.endsWith(ending) || word.length - ending.length < 2) continue;
    const base = word.slice(0, word.length - ending.length);
    for (const form of [base, `${base}e`]) {
      const found = glossary.byWord.get(form);
      if (found) groups.add(found);
    }
  }
  return groups.size > 0 ? [...groups] : undefined;
}

export function createQueryTranslator(deps: {
  db: Kysely<DatabaseSchema>;
  from: SearchLanguage;
  to: SearchLanguage;
  glossary: () => Promise<Glossary>;
  options?: Partial<TranslationOptions> | undefined;
}): QueryTranslator {
  const { from, to } = deps;
  const options = { ...translationDefaults, ...deps.options };
  let stemmed: Promise<StemmedGlossary> | undefined;

  async function stem(glossary: Glossary): Promise<StemmedGlossary> {
    const sources = [...glossary.entries.keys()];
    const targets = [...new Set([...glossary.entries.values()].flat())];
    const [sourceLexemes, targetLexemes] = await Promise.all([
      lexemesOf(deps.db, from, sources),
      lexemesOf(deps.db, to, targets),
    ]);
    const endings = inflectionalEndings[from];
    const result: StemmedGlossary = { endings, byWord: new Map(), byLexeme: new Map() };
    const addTo = (map: Map<string, string[][]>, key: string, wordTargets: readonly string[]) => {
      const list = map.get(key) ?? [];
      for (const target of wordTargets) {
        const targetStems = targetLexemes.get(target) ?? [];
        if (targetStems.length === 0) continue;
        if (!list.some((known) => known.join(' ') === targetStems.join(' '))) list.push(targetStems);
      }
      if (list.length > 0) map.set(key, list);
    };
    for (const [word, wordTargets] of glossary.entries) {
      const lexemes = sourceLexemes.get(word);
      // A stop word, or a phrase the parser splits: not a key.
      if (!lexemes || lexemes.length !== 1) continue;
      addTo(result.byWord, word, wordTargets);
      if (!endings) addTo(result.byLexeme, lexemes[0] as string, wordTargets);
    }
    return result;
  }

  function load(): Promise<StemmedGlossary> {
    stemmed ??= deps.glossary().then(stem);
    stemmed.catch(() => {
      stemmed = undefined;
    });
    return stemmed;
  }

  return {
    from,
    to,
    async translate(query) {
      const glossary = await load();
      const words = query.toLowerCase().match(/\p{L}[\p{L}\p{N}_]*/gu) ?? [];
      const pieces = new Set<string>();
      for (const word of words) {
        pieces.add(word);
        for (const [left, right] of splitsOf(word, options)) {
          pieces.add(left);
          pieces.add(right);
        }
      }
      const parsed = await parsePieces(deps.db, [...pieces], from, to);
      const translations = new Map<string, Translation>();
      const untranslated: string[] = [];
      const add = (lexeme: string, weight: number, word: string) => {
        const known = translations.get(lexeme);
        if (!known || known.weight < weight) translations.set(lexeme, { lexeme, weight, from: word });
      };
      const addTargets = (groups: string[][][], word: string) => {
        for (const targets of groups)
          targets.forEach((stems, position) => {
            for (const lexeme of stems)
              add(lexeme, position === 0 ? options.weight : options.alternativeWeight, word);
          });
      };
      for (const word of words) {
        const piece = parsed.get(word);
        if (!piece || piece.stopWord) continue;
        // A name the parser splits ("pg_resetwal", "work_mem"): for the target-language parse.
        if (piece.source === undefined) {
          untranslated.push(word);
          continue;
        }
        const targetWord = piece.targetSegments >= options.commonTargetSegments;
        const direct = lookup(glossary, word, piece.source, targetWord);
        if (direct) {
          addTargets(direct, word);
          continue;
        }
        // A word the index knows as it is ("databasen" is stemmed to "databas" either way) is
        // left to the parses; only a word unknown to both is split.
        const split =
          piece.targetLexeme || piece.sourceIndexed ? undefined : bestSplit(word, glossary, parsed, options);
        if (!split) {
          untranslated.push(word);
          continue;
        }
        for (const part of split) {
          if (part.targets) addTargets(part.targets, word);
          else if (part.targetLexeme) add(part.targetLexeme, options.weight, word);
        }
      }
      return { translations: [...translations.values()], untranslated: untranslated.join(' ') };
    },
  };
}

/** Two-part splits of a word, the linking s or e of the first part also dropped. */
function splitsOf(word: string, options: TranslationOptions): [string, string][] {
  const min = options.minimumPartLength;
  const splits: [string, string][] = [];
  if (word.length > options.maximumSplitLength) return splits;
  for (let cut = min; cut <= word.length - min; cut++) {
    const left = word.slice(0, cut);
    const right = word.slice(cut);
    splits.push([left, right]);
    if ((left.endsWith('s') || left.endsWith('e')) && left.length > min)
      splits.push([left.slice(0, -1), right]);
  }
  return splits;
}

interface ParsedPiece {
  /** A stop word of the source language: nothing to search for. */
  stopWord: boolean;
  /** Its source-language lexeme (undefined for a stop word or a piece the parser splits). */
  source: string | undefined;
  /** Whether the index holds that lexeme. */
  sourceIndexed: boolean;
  /** Its target-language lexeme when the index holds it, and in how many segments. */
  targetLexeme: string | undefined;
  targetSegments: number;
}

interface SplitPart {
  targets: string[][][] | undefined;
  targetLexeme: string | undefined;
}

/**
 * The split whose parts are both known, preferring glossary parts over parts the index has
 * as target-language words, then the longest last part (the head of a Norwegian compound).
 */
function bestSplit(
  word: string,
  glossary: StemmedGlossary,
  parsed: ReadonlyMap<string, ParsedPiece>,
  options: TranslationOptions,
): SplitPart[] | undefined {
  let best: { parts: SplitPart[]; score: number } | undefined;
  for (const [left, right] of splitsOf(word, options)) {
    const parts = [left, right].map((piece): SplitPart | undefined => {
      const entry = parsed.get(piece);
      if (!entry?.source) return undefined;
      const targets = lookup(glossary, piece, entry.source);
      if (targets) return { targets, targetLexeme: undefined };
      return entry.targetLexeme ? { targets: undefined, targetLexeme: entry.targetLexeme } : undefined;
    });
    if (parts.some((part) => part === undefined)) continue;
    const known = parts as SplitPart[];
    const score = known.filter((part) => part.targets).length * 100 + right.length;
    if (!best || score > best.score) best = { parts: known, score };
  }
  return best?.parts;
}

/** Each piece's source lexeme, and its target lexeme when the index holds that. One statement. */
async function parsePieces(
  db: Kysely<DatabaseSchema>,
  pieces: readonly string[],
  from: SearchLanguage,
  to: SearchLanguage,
): Promise<Map<string, ParsedPiece>> {
  if (pieces.length === 0) return new Map();
  const result = await sql<{
    piece: string;
    source_count: number;
    source: string | null;
    source_indexed: boolean;
    target: string | null;
    target_segments: number | null;
  }>`
    select piece, cardinality(source) as source_count,
      case when cardinality(source) = 1 then source[1] end as source,
      exists (select 1 from knowledge_terms t where cardinality(source) = 1 and t.lexeme = source[1] and t.segments > 0) as source_indexed,
      target_term.lexeme as target, target_term.segments as target_segments
    from unnest(${[...pieces]}::text[]) as piece
    cross join lateral (select tsvector_to_array(to_tsvector(${from}::regconfig, piece)) as source,
                               tsvector_to_array(to_tsvector(${to}::regconfig, piece)) as target) as parsed
    left join lateral (select t.lexeme, t.segments from knowledge_terms t
                       where cardinality(parsed.target) = 1 and t.lexeme = parsed.target[1] and t.segments > 0) as target_term on true`.execute(
    db,
  );
  return new Map(
    result.rows.map((row) => [
      row.piece,
      {
        stopWord: Number(row.source_count) === 0,
        source: row.source ?? undefined,
        sourceIndexed: row.source_indexed,
        targetLexeme: row.target ?? undefined,
        targetSegments: Number(row.target_segments ?? 0),
      },
    ]),
  );
}
