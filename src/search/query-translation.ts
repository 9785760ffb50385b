/**
 * Query translation for cross-language keyword search: a Norwegian question over English
 * pages is searched with the English words a bilingual glossary gives for its words.
 * "Hvordan lager jeg en indeks uten å blokkere skriving til tabellen?" then looks for
 * "create", "index", "block", "write" and "table", where the Norwegian words alone match
 * nothing, or worse, match a rare English token ("lager") on an unrelated page.
 *
 * A glossary is a TSV file, `<source word>\t<target word>[,<target word>...]`, targets most
 * likely first (data/glossaries/; docs/search-and-chat.md says how it was made). Both sides
 * are stemmed with the index's own stemmers when the glossary is first used, so any
 * inflection of a glossary word is found ("tabellene" -> "tabell" -> "table"). A compound
 * the glossary lacks is split into two known parts ("hovedversjon" -> "hoved" + "versjon",
 * "databasefilene" -> "database" + "filene"; a linking s or e is dropped), where a part is
 * known when the glossary has it or the index has it as an English word.
 *
 * A word's first translation counts as one of the query's own words; its alternatives count
 * `alternativeWeight`. Words the glossary does not know ("jsonb", "GIN", "pg_dump") come back
 * as `untranslated`, for the English parse of the query as before.
 */
import { readFile } from 'node:fs/promises';
import { type Kysely, sql } from 'kysely';
import type { DatabaseSchema } from '../db/schema.js';
import type { SearchLanguage } from '../knowledge/language.js';

export const translationDefaults = {
  /** A word's first translation counts this share of a query word. */
  weight: 1,
  /** A target after a word's first counts this share of a query word. */
  alternativeWeight: 0.5,
  /** Parts of a split compound are at least this long. */
  minimumPartLength: 3,
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
    file: new URL('../../data/glossaries/nb-en.tsv', import.meta.url),
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

/** Stemmed glossary: source lexeme -> the target lexemes of each target word, in order. */
type StemmedGlossary = Map<string, string[][]>;

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
    const result: StemmedGlossary = new Map();
    for (const [word, wordTargets] of glossary.entries) {
      const lexemes = sourceLexemes.get(word);
      // A stop word, or a phrase the parser splits: not a key.
      if (!lexemes || lexemes.length !== 1) continue;
      const key = lexemes[0] as string;
      const list = result.get(key) ?? [];
      for (const target of wordTargets) {
        const targetStems = targetLexemes.get(target) ?? [];
        if (targetStems.length === 0) continue;
        if (!list.some((known) => known.join(' ') === targetStems.join(' '))) list.push(targetStems);
      }
      if (list.length > 0) result.set(key, list);
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
        for (const [left, right] of splitsOf(word)) {
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
      const addTargets = (targets: string[][], word: string) => {
        targets.forEach((stems, position) => {
          for (const lexeme of stems)
            add(lexeme, position === 0 ? 1 : translationDefaults.alternativeWeight, word);
        });
      };
      for (const word of words) {
        const piece = parsed.get(word);
        // A stop word of the source language: nothing to search for.
        if (!piece || piece.source === undefined) continue;
        const direct = glossary.get(piece.source);
        if (direct) {
          addTargets(direct, word);
          continue;
        }
        const split = bestSplit(word, glossary, parsed);
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
function splitsOf(word: string): [string, string][] {
  const min = translationDefaults.minimumPartLength;
  const splits: [string, string][] = [];
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
  /** Its source-language lexeme (undefined for a stop word or a piece the parser splits). */
  source: string | undefined;
  /** Its target-language lexeme when the index holds it. */
  targetLexeme: string | undefined;
}

interface SplitPart {
  targets: string[][] | undefined;
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
): SplitPart[] | undefined {
  let best: { parts: SplitPart[]; score: number } | undefined;
  for (const [left, right] of splitsOf(word)) {
    const parts = [left, right].map((piece): SplitPart | undefined => {
      const entry = parsed.get(piece);
      if (!entry?.source) return undefined;
      const targets = glossary.get(entry.source);
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
  const result = await sql<{ piece: string; source: string | null; target: string | null }>`
    select piece,
      case when cardinality(source) = 1 then source[1] end as source,
      (select t.lexeme from knowledge_terms t where cardinality(target) = 1 and t.lexeme = target[1] and t.segments > 0) as target
    from unnest(${[...pieces]}::text[]) as piece,
      lateral (select tsvector_to_array(to_tsvector(${from}::regconfig, piece)) as source,
                      tsvector_to_array(to_tsvector(${to}::regconfig, piece)) as target) as parsed`.execute(
    db,
  );
  return new Map(
    result.rows.map((row) => [
      row.piece,
      { source: row.source ?? undefined, targetLexeme: row.target ?? undefined },
    ]),
  );
}

/** word -> its lexemes in `language` (none for a stop word), in one statement. */
async function lexemesOf(
  db: Kysely<DatabaseSchema>,
  language: SearchLanguage,
  words: readonly string[],
): Promise<Map<string, string[]>> {
  const result = await sql<{ word: string; lexemes: string[] }>`
    select word, tsvector_to_array(to_tsvector(${language}::regconfig, word)) as lexemes
    from unnest(${[...words]}::text[]) as word`.execute(db);
  return new Map(result.rows.map((row) => [row.word, row.lexemes]));
}
