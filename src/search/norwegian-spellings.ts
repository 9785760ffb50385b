/**
 * Norwegian has two written standards, Bokmål and Nynorsk, and a reader asks in the one they
 * write while a manual may be in the other: "gjøre bildet lysere" (Bokmål) against "gjere
 * biletet lysare" (Nynorsk). The Norwegian stemmer joins many pairs already (bruker/brukar,
 * synlig/synleg, lagret/lagra all stem alike) but not these. So a Norwegian question over an
 * index that holds Norwegian segments is also searched with the other standard's spelling of
 * its words, each counting as the word itself (weight 1): the word is the same, only spelt
 * another way, and pages are written in one standard or the other, so no page counts both.
 *
 * Two sources, used both ways (Bokmål to Nynorsk and back):
 * - regular spelling rules: hv-/kv- (hvit/kvit), -het/-heit (hastighet/hastigheit), and the
 *   comparative -ere/-are and superlative -este/-aste (lysere/lysare);
 * - a word list for the pairs no rule makes (bilde/bilete, vindu/vindauge, størrelse/storleik):
 *   data/glossaries/nb-nn.tsv, stemmed with the Norwegian stemmer on first use.
 * A variant is searched only when its lexeme differs from the word's and the index holds it
 * (`knowledge_terms`), so a rule that makes a non-word costs nothing. Listed in
 * `parameters.query_spellings`.
 */
import { pathToFileURL } from 'node:url';
import { type Kysely, sql } from 'kysely';
import type { DatabaseSchema } from '../db/schema.js';
import { packagePath } from '../runtime/package-root.js';
import { loadGlossary } from './query-translation.js';

export const norwegianSpellingsFile = pathToFileURL(packagePath('data/glossaries/nb-nn.tsv'));

export interface SpellingVariant {
  /** The other standard's lexeme searched for. */
  lexeme: string;
  weight: number;
  /** The query word it respells. */
  from: string;
}

/** Spelling rules, as [pattern, replacement] per direction; applied one at a time. */
const rules: readonly [RegExp, string][] = [
  [/^hv(\p{L}{2,})$/u, 'kv$1'],
  [/^kv(\p{L}{2,})$/u, 'hv$1'],
  [/^(\p{L}{3,})het(en|er|ene|a)?$/u, '$1heit$2'],
  [/^(\p{L}{3,})heit(en|er|ene|a|ar|ane)?$/u, '$1het$2'],
  [/^(\p{L}{3,})ere$/u, '$1are'],
  [/^(\p{L}{3,})are$/u, '$1ere'],
  [/^(\p{L}{3,})este$/u, '$1aste'],
  [/^(\p{L}{3,})aste$/u, '$1este'],
];

/** The rule-made respellings of a word (lower case), without the word itself. */
export function ruleVariants(word: string): string[] {
  const variants = new Set<string>();
  for (const [pattern, replacement] of rules)
    if (pattern.test(word)) variants.add(word.replace(pattern, replacement));
  variants.delete(word);
  return [...variants];
}

/** Lexeme -> the other standard's lexemes, both ways, from the word list. */
type SpellingPairs = Map<string, Set<string>>;

export function createNorwegianSpellings(deps: {
  db: Kysely<DatabaseSchema>;
  /** The word list; the built-in one by default. */
  file?: URL | string | undefined;
}) {
  let pairs: Promise<SpellingPairs> | undefined;

  async function stemPairs(): Promise<SpellingPairs> {
    const glossary = await loadGlossary(deps.file ?? norwegianSpellingsFile);
    const words = [...new Set([...glossary.entries].flatMap(([word, others]) => [word, ...others]))];
    const lexemes = await stems(deps.db, words);
    const joined: SpellingPairs = new Map();
    const join = (from: string | undefined, to: string | undefined) => {
      if (!from || !to || from === to) return;
      joined.set(from, (joined.get(from) ?? new Set()).add(to));
    };
    for (const [word, others] of glossary.entries) {
      for (const other of others) {
        join(lexemes.get(word), lexemes.get(other));
        join(lexemes.get(other), lexemes.get(word));
      }
    }
    return joined;
  }

  /** The other standard's spellings of the query's words that the index holds. */
  async function variants(query: string): Promise<SpellingVariant[]> {
    const words = [...new Set(query.toLowerCase().match(/\p{L}{3,}/gu) ?? [])];
    if (words.length === 0) return [];
    pairs ??= stemPairs().catch((error: unknown) => {
      pairs = undefined;
      throw error;
    });
    const known = await pairs;
    const respelt = words.flatMap((word) => ruleVariants(word));
    const lexemes = await stems(deps.db, [...words, ...respelt]);
    const candidates = new Map<string, string>();
    for (const word of words) {
      const own = lexemes.get(word);
      if (!own) continue;
      const others = [
        ...(known.get(own) ?? []),
        ...ruleVariants(word).map((variant) => lexemes.get(variant)),
      ];
      for (const other of others)
        if (other && other !== own && !candidates.has(other)) candidates.set(other, word);
    }
    const held = await indexed(deps.db, [...candidates.keys()]);
    return [...candidates]
      .filter(([lexeme]) => held.has(lexeme))
      .map(([lexeme, from]) => ({ lexeme, weight: 1, from }));
  }

  return { variants };
}

/** Each word's Norwegian lexeme (a word the stemmer drops, a stop word, has none). One statement. */
async function stems(db: Kysely<DatabaseSchema>, words: readonly string[]): Promise<Map<string, string>> {
  if (words.length === 0) return new Map();
  const result = await sql<{ word: string; lexeme: string }>`
    select w.word, (tsvector_to_array(to_tsvector('norwegian', w.word)))[1] as lexeme
    from unnest(${[...words]}::text[]) as w(word)`.execute(db);
  const lexemes = new Map<string, string>();
  for (const row of result.rows) if (row.lexeme) lexemes.set(row.word, row.lexeme);
  return lexemes;
}

/** The lexemes some segment holds. */
async function indexed(db: Kysely<DatabaseSchema>, lexemes: readonly string[]): Promise<Set<string>> {
  if (lexemes.length === 0) return new Set();
  const result = await sql<{ lexeme: string }>`
    select lexeme from knowledge_terms where lexeme = any (${[...lexemes]}::text[]) and segments > 0`.execute(
    db,
  );
  return new Set(result.rows.map((row) => row.lexeme));
}
