import { type Kysely, sql } from 'kysely';
import type { DatabaseSchema } from '../db/schema.js';
import { searchableText } from '../search-index/searchable-text.js';

/**
 * Texts analysed as keyword search analyses the index: the same text search configurations
 * (PostgreSQL's parser, stemmers and stop words), the same searchable text (link targets and
 * markdown escapes dropped), and each query lexeme weighted by the same inverse document
 * frequency BM25 gives it (keyword-sql.ts), from the statistics the index keeps. The offline
 * answer ranks sentences with it, so a sentence scores on the words search matched its segment on.
 */
export interface TextAnalysis {
  /** Query lexeme -> idf; a lexeme the index does not hold is left out (it matches nothing). */
  query: Map<string, number>;
  /** Each text's lexemes, in the order given. */
  texts: Set<string>[];
}

export type TextAnalyzer = (query: string, texts: readonly string[]) => Promise<TextAnalysis>;

/** An analyzer over the index in `db`, parsing with `languages` (lexemes of every one merged). */
export function createTextAnalyzer(db: Kysely<DatabaseSchema>, languages: readonly string[]): TextAnalyzer {
  const configs = languages.length > 0 ? [...new Set(languages)] : ['simple'];
  return async (query, texts) => {
    const searchable = texts.map((text) => searchableText(text));
    const [queryRows, textRows] = await Promise.all([
      sql<{ lexeme: string; idf: number }>`
        with corpus as (select greatest(sum(segments), 1)::float8 as n from knowledge_segment_totals),
        lexemes as (
          select distinct unnest(tsvector_to_array(to_tsvector(config::regconfig, ${searchableText(query)}))) as lexeme
          from unnest(${configs}::text[]) as config
        )
        select l.lexeme, ln(1 + (corpus.n - t.segments + 0.5) / (t.segments + 0.5)) as idf
        from lexemes l join knowledge_terms t on t.lexeme = l.lexeme and t.segments > 0, corpus`.execute(db),
      searchable.length === 0
        ? Promise.resolve({ rows: [] as { position: string; lexemes: string[] }[] })
        : sql<{ position: string; lexemes: string[] }>`
            select t.position, array(
              select distinct unnest(tsvector_to_array(to_tsvector(config::regconfig, t.text)))
              from unnest(${configs}::text[]) as config
            ) as lexemes
            from unnest(${searchable}::text[]) with ordinality as t(text, position)`.execute(db),
    ]);
    const analysed = searchable.map(() => new Set<string>());
    for (const row of textRows.rows) analysed[Number(row.position) - 1] = new Set(row.lexemes);
    return {
      query: new Map(queryRows.rows.map((row) => [row.lexeme, Number(row.idf)])),
      texts: analysed,
    };
  };
}
