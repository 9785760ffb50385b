/**
 * RRF's third list (issue 34, WEIR_SEARCH_LSA=on): the corpus LSA's ranking of a question
 * (lsa-index.ts), its vector pulled toward the keyword ranking's first segments. Needs the
 * keyword ranking before the statement that fuses: the in-memory index gives it on PGlite,
 * and elsewhere it is fetched on its own (the statement then takes it as arrays, which ranks
 * as the inline one does).
 */
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../db/schema.js';
import type { KeywordHit } from './keyword-postings.js';
import { type KeywordFilters, type KeywordQuery, keywordCandidatesSql } from './keyword-sql.js';
import type { LsaIndex, LsaState } from './lsa-index.js';
import { lsaDefaults, questionTerms } from './lsa-model.js';
import type { LsaRanking } from './search-sql.js';

export interface LsaListOutcome {
  /** `used`, or why the search went without the list (a websearch-syntax query is not folded in). */
  state: 'used' | Exclude<LsaState, 'ready'> | 'match_all';
  lsa?: LsaRanking;
  /** The keyword ranking when it had to be fetched for the feedback. */
  keywordRanked?: KeywordHit[];
}

/** What a search hands the LSA list (LsaIndex.list). */
export interface LsaListRequest {
  db: Kysely<DatabaseSchema>;
  query: string;
  keyword: { query: KeywordQuery; depth: number };
  keywordRanked: readonly KeywordHit[] | undefined;
  filters: KeywordFilters;
  translations: readonly { lexeme: string; weight: number }[];
  expansions: readonly { lexeme: string }[];
}

export async function lsaList(args: LsaListRequest & { index: LsaIndex }): Promise<LsaListOutcome> {
  if (args.keyword.query.match === 'all') return { state: 'match_all' };
  const state = args.index.prepare();
  if (state !== 'ready') return { state };
  const fetched = args.keywordRanked
    ? undefined
    : (
        await keywordCandidatesSql(args.keyword.query, args.filters, args.keyword.depth).execute(args.db)
      ).rows.map((row) => {
        const { segment_id, raw } = row as { segment_id: string; raw: number | string };
        return { segmentId: segment_id, raw: Number(raw) };
      });
  const ranked = args.keywordRanked ?? fetched ?? [];
  const ranking = args.index.rank(
    {
      terms: questionTerms(args.query, args.translations, args.expansions),
      feedback: ranked.slice(0, lsaDefaults.feedback).map((hit) => hit.segmentId),
    },
    args.filters,
    lsaDefaults.depth,
  );
  if (ranking.state !== 'ready') return { state: ranking.state, keywordRanked: fetched };
  return { state: 'used', lsa: { ranked: ranking.hits, weight: lsaDefaults.weight }, keywordRanked: fetched };
}
