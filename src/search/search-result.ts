/** A search statement's row as an API search result (spec 4.3): rank, score, components and source. */
import { sourceLink } from '../storage/object-links.js';
import type { RankingComponent, SearchResult, SearchType } from './search-service.js';
import type { SearchRow } from './search-sql.js';

export function headingPathOf(row: SearchRow): string[] {
  const headingPath = typeof row.heading_path === 'string' ? JSON.parse(row.heading_path) : row.heading_path;
  return Array.isArray(headingPath) ? headingPath : [];
}

export function present(
  row: SearchRow,
  index: number,
  type: SearchType,
  k: number,
  weights: { keyword: number; vector: number; lsa: number },
): SearchResult {
  const component = (ranking: 'keyword' | 'vector' | 'lsa'): RankingComponent => {
    const rank = { keyword: row.keyword_rank, vector: row.vector_rank, lsa: row.lsa_rank ?? null }[ranking];
    const raw = { keyword: row.keyword_raw, vector: row.vector_raw, lsa: row.lsa_raw ?? null }[ranking];
    const weight = type === 'rrf' ? weights[ranking] : 1;
    return {
      ranking,
      rank,
      raw_score: raw === null ? null : Number(raw),
      weight,
      contribution: rank === null ? 0 : type === 'rrf' ? weight / (k + rank) : Number(raw),
    };
  };
  // The LSA component only when the statement fused an LSA list (none when the setting is off).
  const components =
    type === 'rrf'
      ? [component('keyword'), component('vector'), ...(row.lsa_rank !== undefined ? [component('lsa')] : [])]
      : [component(type)];
  // Content without a URL (files, stored objects) is identified by its object key.
  const objectKey = row.storage_key ?? (row.url ? null : row.source_key);
  return {
    segment_id: row.segment_id,
    rank: index + 1,
    score: Number(row.score),
    text: row.text,
    language: row.language,
    source: {
      execution_id: row.execution_id,
      document_id: row.document_id,
      url: row.url,
      object_key: objectKey,
      link: sourceLink(row.url, objectKey),
      title: row.title,
      heading_path: headingPathOf(row),
    },
    components,
  };
}
