/**
 * BM25F keyword ranking in SQL, the same statement on PGlite and on a PostgreSQL server.
 *
 * score(segment) = sum over query lexemes t of
 *   idf(t) * f * (k1 + 1) / (f + k1 * (1 - b + b * length / average length))
 * with idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)) (never negative), f the lexeme's
 * occurrences with heading and title occurrences counted `headingWeight` times (BM25F), and
 * length the segment's token count. N, df and the average length come from the statistics
 * tables that triggers keep (migration 0011), so they follow every write.
 *
 * Candidates come from the GIN index. In `any` mode (natural-language questions, the default)
 * they are the segments holding any of the query's rarest lexemes: lexemes are taken in order
 * of document frequency while their summed postings stay within `candidateBudget` (the rarest
 * is always taken). The query's own lexemes come first and expansions only spend what budget
 * they leave: a rare expansion must not crowd a query word's segments out of the candidates.
 * Segments holding only common lexemes cannot outscore one holding a rare
 * one by much, and the budget bounds the work at any corpus size. When even the rarest lexeme
 * is over the budget (a query of common words only), the candidates are the segments holding
 * the two rarest query lexemes together. Either way at most `maxCandidates` segments are
 * scored (in index order beyond that: a query of words that every segment holds has no better
 * order to offer). Every candidate is then scored on all query lexemes. In `all` mode the candidates are the segments matching the
 * websearch query (every term, quoted phrases, -exclusions) as typed.
 *
 * A lexeme's occurrence counts come from ts_rank on a one-lexeme query, which is a binary
 * search in the segment's tsvector: with weights {1,1,1,1} it returns H(tf) / zeta(2), where
 * H(n) = sum over i <= n of 1/i^2, and n = round(1 / (zeta(2) - H) - 1/2) recovers tf exactly
 * (tested for every lexeme of the PostgreSQL manual). With weights {0,0,0,1} it counts the
 * heading positions (weight A), which come first in the vector because headings are indexed
 * before the text. Unnesting whole vectors instead was four times slower.
 */
import { type RawBuilder, sql } from 'kysely';
import type { SegmentRowFields } from './search-sql.js';

export const bm25Defaults = {
  k1: 1.2,
  b: 0.75,
  /** An occurrence in the title or heading path counts this many times. */
  headingWeight: 3,
  /** Postings (segments per lexeme, summed) that candidate selection may take in `any` mode. */
  candidateBudget: 1200,
  /** The most segments scored for one query. */
  maxCandidates: 3000,
} as const;

export type Bm25Parameters = { [key in keyof typeof bm25Defaults]: number };

export interface KeywordQuery {
  text: string;
  /** Text search configurations the query is parsed with (lexemes are merged). */
  languages: readonly string[];
  /**
   * The query's own language, when known: its stop words are dropped before the query is
   * parsed with the other configurations, so "hvordan setter jeg" adds no English lexemes.
   */
  queryLanguage?: string | undefined;
  /**
   * The text parsed with the configurations other than `queryLanguage`; `text` when absent.
   * A translated query gives the words its glossary did not translate ("jsonb", "GIN").
   */
  otherLanguagesText?: string | undefined;
  match: 'any' | 'all';
  /**
   * Lexemes searched besides the query's own, each counting `weight` of a query lexeme
   * (word-vector expansions, glossary translations). Those of weight 1 take the candidate
   * budget as the query's own lexemes do.
   */
  expansions?: readonly { lexeme: string; weight: number }[] | undefined;
  parameters?: Partial<Bm25Parameters> | undefined;
}

export interface KeywordFilters {
  executionIds: readonly string[] | null;
  language: string | undefined;
}

const zeta2 = 1.64493406685;

/** Occurrences of a lexeme recovered from ts_rank's value (see the module comment). */
function occurrences(rank: RawBuilder<unknown>): RawBuilder<number> {
  return sql<number>`case when ${rank} = 0 then 0 else round(1 / (${zeta2}::float8 * (1 - ${rank})) - 0.5) end`;
}

/**
 * The query's lexemes, each once with its weight (1 for the query's own, an expansion's or
 * translation's otherwise; the highest when several give it): the query parsed with each
 * configuration, the query language's stop words kept out of the other parses.
 */
function queryLexemesSql(query: KeywordQuery): RawBuilder<{ lexeme: string; weight: number }> {
  const configs = query.languages.length > 0 ? query.languages : ['simple'];
  const parsed = configs.map((language) => {
    const text =
      query.queryLanguage && language !== query.queryLanguage
        ? sql`(select coalesce(string_agg(word, ' '), '') from regexp_split_to_table(${query.otherLanguagesText ?? query.text}, '\\s+') as word
               where to_tsvector(${query.queryLanguage}::regconfig, word) <> ''::tsvector)`
        : sql`${query.text}`;
    return sql`select unnest(tsvector_to_array(to_tsvector(${language}::regconfig, ${text}))) as lexeme, 1::float8 as weight`;
  });
  const expansions = query.expansions ?? [];
  if (expansions.length > 0) {
    parsed.push(
      sql`select * from unnest(${expansions.map((expansion) => expansion.lexeme)}::text[], ${expansions.map((expansion) => expansion.weight)}::float8[])`,
    );
  }
  return sql`select lexeme, max(weight) as weight from (${sql.join(parsed, sql` union all `)}) as parsed (lexeme, weight)
      group by lexeme`;
}

/**
 * The CTEs `corpus` (N, average length), `query_lexemes` and `query_terms` (each lexeme the
 * index holds, with its document frequency, IDF, tsquery, and the postings of the lexemes
 * before it in the order of the candidate budget).
 */
function queryTermsCtes(query: KeywordQuery): RawBuilder<unknown> {
  return sql`
    corpus as (
      select greatest(sum(segments), 1)::float8 as n, greatest(sum(tokens), 1)::float8 / greatest(sum(segments), 1) as average_length
      from knowledge_segment_totals
    ),
    query_lexemes as (
      ${queryLexemesSql(query)}
    ),
    query_terms as (
      select q.lexeme, q.weight, t.segments as df, knowledge_quote_lexeme(q.lexeme)::tsquery as term,
        q.weight * ln(1 + (corpus.n - t.segments + 0.5) / (t.segments + 0.5)) as idf,
        coalesce(sum(t.segments) over (order by q.weight < 1, t.segments, q.lexeme rows between unbounded preceding and 1 preceding), 0) as postings_before
      from query_lexemes q join knowledge_terms t on t.lexeme = q.lexeme and t.segments > 0, corpus
    )`;
}

export interface QueryTerm {
  lexeme: string;
  weight: number;
  df: number;
  idf: number;
  /** Segments in the index (N). */
  n: number;
  average_length: number;
}

/**
 * query_terms alone, in their order (weight 1 first, then by document frequency and
 * lexeme), with the corpus figures: what the in-memory ranking (keyword-postings.ts) takes
 * from the database, so that IDF is the database's own `ln` (V8's Math.log differs from it in
 * the last bit for about 3% of arguments) and the statistics are checked against its own.
 */
export function queryTermsSql(query: KeywordQuery): RawBuilder<QueryTerm> {
  return sql<QueryTerm>`
    with ${queryTermsCtes(query)}
    select q.lexeme, q.weight, q.df, q.idf, corpus.n, corpus.average_length
    from query_terms q, corpus
    order by q.weight < 1, q.df, q.lexeme`;
}

/** The CTE body: (segment_id, raw) of the best `depth` segments, best first. */
export function keywordCandidatesSql(
  query: KeywordQuery,
  filters: KeywordFilters,
  depth: number,
): RawBuilder<unknown> {
  const p = { ...bm25Defaults, ...query.parameters };
  const configs = query.languages.length > 0 ? query.languages : ['simple'];
  const candidateQuery =
    query.match === 'all'
      ? sql`(${sql.join(
          configs.map((language) => sql`websearch_to_tsquery(${language}::regconfig, ${query.text})`),
          sql` || `,
        )})`
      : sql`(select case
               when min(df) filter (where weight = 1) > ${p.candidateBudget}::float8 and count(*) filter (where weight = 1) > 1
                 then (select string_agg(knowledge_quote_lexeme(lexeme), ' & ')
                       from (select lexeme from query_terms where weight = 1 order by df, lexeme limit 2) as rarest)::tsquery
               else string_agg(knowledge_quote_lexeme(lexeme), ' | ')
                      filter (where postings_before + df <= ${p.candidateBudget}::float8 or postings_before = 0)::tsquery
             end
             from query_terms)`;
  const filterSql = filtersSql(filters);
  return sql`
    with ${queryTermsCtes(query)},
    candidates as materialized (
      select s.segment_id, s.token_count, s.search_vector || ''::tsvector as vector
      from knowledge_segments s
      where s.search_vector @@ ${candidateQuery}
        ${filterSql}
      limit ${p.maxCandidates}
    ),
    ${termRanksCte()}
    ${bm25Select(p)}
    order by raw desc, r.segment_id
    limit ${depth}`;
}

/** The filters as conditions on the segments `s`. */
function filtersSql(filters: KeywordFilters): RawBuilder<unknown> {
  return sql`${filters.executionIds ? sql`and s.execution_id = any(${sql.val([...filters.executionIds])}::text[])` : sql``}
          ${filters.language ? sql`and s.language = ${filters.language}` : sql``}`;
}

/**
 * `term_ranks`: which candidate holds which query lexeme first (a binary search in the
 * vector), then each lexeme's counts only where it occurs: ts_rank is the statement's main cost.
 */
function termRanksCte(): RawBuilder<unknown> {
  return sql`term_ranks as materialized (
      select m.segment_id, m.token_count, m.idf,
        ts_rank('{1,1,1,1}', m.vector, m.term)::float8 as rank_all,
        ts_rank('{0,0,0,1}', m.vector, m.term)::float8 as rank_heading
      from (select c.segment_id, c.token_count, c.vector, q.idf, q.term
            from candidates c cross join query_terms q
            where c.vector @@ q.term offset 0) as m
    )`;
}

/** (segment_id, raw): each term-ranked candidate's BM25F sum. */
function bm25Select(p: Bm25Parameters): RawBuilder<unknown> {
  const tf = occurrences(sql`rank_all`);
  const headingTf = occurrences(sql`rank_heading`);
  return sql`select r.segment_id,
      sum(r.idf * f.tf * ${p.k1 + 1}::float8 / (f.tf + ${p.k1}::float8 * (${1 - p.b}::float8 + ${p.b}::float8 * r.token_count / corpus.average_length))) as raw
    from term_ranks r
    cross join lateral (select ${tf} + ${p.headingWeight - 1}::float8 * ${headingTf} as tf) f
    cross join corpus
    group by r.segment_id`;
}

/** A segment of an addressed document (addressedSegmentsSql) with its BM25F score for the query. */
export interface AddressedSegment extends Omit<SegmentRowFields, 'text_words'> {
  /** 0 when it holds no query lexeme, or without a query. */
  raw: number;
}

/** Copies of pages by their stored identity: documents whose page_key is one of `keys`, in `language`. */
export interface PageLookup {
  keys: readonly string[];
  /** A search language name (`norwegian`), as page_language holds it. */
  language: string;
}

/**
 * Every segment (within the filters) of the documents at `addresses`, a document's address
 * being its URL, or its source key when it has none, and of the documents `pages` names (by
 * page key and language, migration 20), each with its BM25F score for the query, scored as
 * keywordCandidatesSql scores a candidate. reader-copies.ts picks each document's best.
 */
export function addressedSegmentsSql(
  query: KeywordQuery | undefined,
  addresses: readonly string[],
  filters: KeywordFilters,
  pages?: PageLookup,
): RawBuilder<AddressedSegment> {
  const p = { ...bm25Defaults, ...query?.parameters };
  const filterSql = filtersSql(filters);
  const byPage =
    pages && pages.keys.length > 0
      ? sql`or (d.page_key = any(${sql.val([...pages.keys])}::text[]) and d.page_language = ${pages.language})`
      : sql``;
  const candidates = sql`candidates as materialized (
      select s.segment_id, s.token_count, s.search_vector || ''::tsvector as vector
      from knowledge_documents d join knowledge_segments s on s.document_id = d.document_id
      where (d.url = any(${sql.val([...addresses])}::text[])
             or (d.url is null and d.source_key = any(${sql.val([...addresses])}::text[])) ${byPage}) ${filterSql}
    )`;
  const scored = query
    ? sql`with ${queryTermsCtes(query)}, ${candidates}, ${termRanksCte()}, scores as (${bm25Select(p)})`
    : sql`with ${candidates}, scores as (select null::uuid as segment_id, null::float8 as raw where false)`;
  return sql<AddressedSegment>`${scored}
    select s.segment_id, s.text, s.language, s.heading_path, s.segment_index, s.execution_id,
           d.document_id, d.url, d.source_key, d.storage_key, d.title,
           d.page_key, d.page_language, coalesce(sc.raw, 0)::float8 as raw
    from candidates c
    join knowledge_segments s on s.segment_id = c.segment_id
    join knowledge_documents d on d.document_id = s.document_id
    left join scores sc on sc.segment_id = c.segment_id
    order by d.document_id, s.segment_index`;
}
