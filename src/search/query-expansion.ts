/**
 * Word-vector query expansion for keyword search: each content word of an English query adds
 * the indexed words nearest to it in meaning (cosine above `minSimilarity`, at most
 * `neighbours` per word), at a fraction of a query word's weight. "How do I stop old row
 * versions piling up" then also looks for "accumulate" and "prevent", which the page may use
 * instead. Measured against averaged word vectors as document embeddings, which lost to plain
 * BM25 when fused (shared/notes/retrieval-calibration.md, docs/benchmarks.md).
 *
 * Only words that occur in the index are expansion targets: the vocabulary is the vector
 * words whose English lexeme is in knowledge_terms, rebuilt when the index has changed (looked
 * at most every `refreshMs`). Stop words (an empty English lexeme) are neither expanded nor
 * added. Expansions of a word are cached per vocabulary.
 */
import { type Kysely, sql } from 'kysely';
import type { DatabaseSchema } from '../db/schema.js';
import type { WordVectors } from '../embedding/word-vectors.js';
import { lexemesOf } from './lexemes.js';

export const expansionDefaults = {
  neighbours: 1,
  minSimilarity: 0.6,
  /** An expansion counts this share of a query word in BM25. */
  weight: 0.3,
  refreshMs: 30_000,
} as const;

export type ExpansionOptions = { [key in keyof typeof expansionDefaults]: number };

export interface Expansion {
  /** The English lexeme searched for. */
  lexeme: string;
  weight: number;
  /** The query word it came from and its similarity, for the response's parameters. */
  from: string;
  similarity: number;
}

export interface QueryExpander {
  expand(query: string): Promise<Expansion[]>;
}

interface Vocabulary {
  /** The index's size when built: a change means a rebuild. */
  version: string;
  builtAt: number;
  /** English lexeme of every vector word ('' for a stop word). */
  lexemeOf: Map<string, string>;
  /** Rows (into the word vectors) of the words whose lexeme is indexed. */
  rows: Int32Array;
  /** Their vectors, read together so the scan reads memory in order. */
  matrix: Float32Array;
  cache: Map<string, Expansion[]>;
}

const maxCachedWords = 20_000;

export function createQueryExpander(deps: {
  db: Kysely<DatabaseSchema>;
  vectors: () => Promise<WordVectors | undefined>;
  options?: Partial<ExpansionOptions>;
}): QueryExpander {
  const options = { ...expansionDefaults, ...deps.options };
  let vocabulary: Promise<Vocabulary | undefined> | undefined;
  let checking: Promise<Vocabulary | undefined> | undefined;

  async function indexVersion(): Promise<string> {
    const result = await sql<{ version: string }>`
      select coalesce(sum(segments), 0) || ':' || coalesce(sum(tokens), 0) as version
      from knowledge_segment_totals`.execute(deps.db);
    return result.rows[0]?.version ?? '0:0';
  }

  async function build(vectors: WordVectors, version: string, previous: Vocabulary | undefined) {
    // Every vector word through the English stemmer once; kept across rebuilds.
    const lexemeOf = previous?.lexemeOf ?? englishLexemes(await lexemesOf(deps.db, 'english', vectors.words));
    const indexed = await sql<{ lexeme: string }>`
      select lexeme from knowledge_terms where segments > 0 and lexeme = any(${[...new Set(lexemeOf.values())]}::text[])`.execute(
      deps.db,
    );
    const present = new Set(indexed.rows.map((row) => row.lexeme));
    const rows: number[] = [];
    vectors.words.forEach((word, row) => {
      const lexeme = lexemeOf.get(word);
      if (lexeme && present.has(lexeme)) rows.push(row);
    });
    const matrix = await vectors.rows(rows);
    return { version, builtAt: Date.now(), lexemeOf, rows: Int32Array.from(rows), matrix, cache: new Map() };
  }

  async function currentVocabulary(vectors: WordVectors): Promise<Vocabulary | undefined> {
    const existing = await vocabulary;
    if (existing && Date.now() - existing.builtAt < options.refreshMs) return existing;
    // One check (and build) at a time: the first 50 queries after a start would otherwise each
    // stem all 80k vector words on the database's one session (issue 35).
    checking ??= checkVocabulary(vectors, existing).finally(() => {
      checking = undefined;
    });
    return checking;
  }

  async function checkVocabulary(vectors: WordVectors, existing: Vocabulary | undefined) {
    const version = await indexVersion();
    if (existing && existing.version === version) {
      existing.builtAt = Date.now();
      return existing;
    }
    vocabulary = build(vectors, version, existing);
    vocabulary.catch(() => {
      vocabulary = undefined;
    });
    return vocabulary;
  }

  return {
    async expand(query) {
      const vectors = await deps.vectors();
      if (!vectors) return [];
      const current = await currentVocabulary(vectors);
      if (!current || current.rows.length === 0) return [];
      const words = [...new Set(query.toLowerCase().match(/[a-z][a-z0-9_-]*/g) ?? [])];
      const queryLexemes = new Set(words.map((word) => current.lexemeOf.get(word)).filter(Boolean));
      const best = new Map<string, Expansion>();
      for (const word of words) {
        for (const expansion of await neighboursOf(word, vectors, current, options)) {
          if (queryLexemes.has(expansion.lexeme)) continue;
          const known = best.get(expansion.lexeme);
          if (!known || known.similarity < expansion.similarity) best.set(expansion.lexeme, expansion);
        }
      }
      return [...best.values()];
    },
  };
}

async function neighboursOf(
  word: string,
  vectors: WordVectors,
  vocabulary: Vocabulary,
  options: ExpansionOptions,
): Promise<Expansion[]> {
  const cached = vocabulary.cache.get(word);
  if (cached) return cached;
  const row = vectors.indexOf(word);
  const lexeme = vocabulary.lexemeOf.get(word);
  let found: Expansion[] = [];
  if (row !== undefined && lexeme) {
    const { dimensions } = vectors;
    // The word's own row, from the vectors' file (read once: the answer is cached below).
    const query = await vectors.rows([row]);
    const { matrix, rows } = vocabulary;
    const top: { row: number; similarity: number }[] = [];
    for (let position = 0, start = 0; position < rows.length; position++, start += dimensions) {
      let dot = 0;
      for (let d = 0; d < dimensions; d++) dot += (query[d] as number) * (matrix[start + d] as number);
      if (dot <= options.minSimilarity || rows[position] === row) continue;
      top.push({ row: rows[position] as number, similarity: dot });
      if (top.length > options.neighbours * 4) {
        top.sort((a, b) => b.similarity - a.similarity);
        top.length = options.neighbours * 2;
      }
    }
    top.sort((a, b) => b.similarity - a.similarity);
    const seen = new Set([lexeme]);
    for (const candidate of top) {
      const candidateLexeme = vocabulary.lexemeOf.get(vectors.words[candidate.row] as string) as string;
      // "deleting" and "deleted" share a lexeme with "delete": nothing to add.
      if (seen.has(candidateLexeme)) continue;
      seen.add(candidateLexeme);
      found.push({
        lexeme: candidateLexeme,
        weight: options.weight,
        from: word,
        similarity: candidate.similarity,
      });
      if (found.length === options.neighbours) break;
    }
  }
  found = found.map((expansion) => ({
    ...expansion,
    similarity: Math.round(expansion.similarity * 1000) / 1000,
  }));
  if (vocabulary.cache.size >= maxCachedWords) vocabulary.cache.clear();
  vocabulary.cache.set(word, found);
  return found;
}

/** word -> its English lexeme ('' for a stop word, or a word the parser splits). */
function englishLexemes(lexemes: ReadonlyMap<string, string[]>): Map<string, string> {
  return new Map([...lexemes].map(([word, found]) => [word, found.length === 1 ? (found[0] as string) : '']));
}
