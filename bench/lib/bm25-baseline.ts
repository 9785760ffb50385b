/**
 * The BM25 baselines of bench:quality, both over the segments the knowledge index holds, read
 * back from the database, and both with MiniSearch (a well-kept library). Pages rank by their
 * best segment: the evaluation keeps each page at its first (best-scoring) segment.
 *
 * - `bm25`: MiniSearch at its defaults (BM25+ k 1.2, b 0.7, d 0.5; words cut at spaces and
 *   punctuation and lower-cased, no stop words, no stemming; OR of the query's terms), segment
 *   text only.
 * - `bm25-english`: what a search engine gives English text out of the box, Lucene's
 *   EnglishAnalyzer or Elasticsearch's `english` (src/search/english-analyzer.ts: lower case, English
 *   stop words, Porter stemming) with Lucene's BM25 (k1 1.2, b 0.75, no +d), over two fields,
 *   the page title boosted x2 and the segment text; a segment's score is the sum of its fields'
 *   (OR of the query's terms).
 */
import type { Kysely } from 'kysely';
import MiniSearch, { type Options } from 'minisearch';
import type { DatabaseSchema } from '../../src/db/schema.js';
import type { Retrieve } from '../../src/evaluation/evaluate.js';
import type { ResultSource } from '../../src/evaluation/metrics.js';
import { analyzeEnglishTerm, tokenizeEnglish } from '../../src/search/english-analyzer.js';

export const baselineModes = ['bm25', 'bm25-english'] as const;
export type BaselineMode = (typeof baselineModes)[number];

export interface Bm25Baselines {
  retrieve: Retrieve;
  segments: number;
  indexSeconds: Record<BaselineMode, number>;
}

interface SegmentDocument {
  id: string;
  title: string;
  text: string;
}

const indexOptions: Record<BaselineMode, Options<SegmentDocument>> = {
  bm25: { fields: ['text'] },
  'bm25-english': {
    fields: ['title', 'text'],
    tokenize: tokenizeEnglish,
    processTerm: analyzeEnglishTerm,
    searchOptions: { boost: { title: 2 }, bm25: { k: 1.2, b: 0.75, d: 0 } },
  },
};

export async function bm25Baselines(db: Kysely<DatabaseSchema>): Promise<Bm25Baselines> {
  const rows = await db
    .selectFrom('knowledge_segments as s')
    .innerJoin('knowledge_documents as d', 'd.document_id', 's.document_id')
    .select(['s.segment_id', 's.text', 'd.document_id', 'd.url', 'd.storage_key', 'd.source_key', 'd.title'])
    .execute();
  const documents = rows.map((row) => ({ id: row.segment_id, title: row.title ?? '', text: row.text }));
  const indexes = new Map<string, MiniSearch<SegmentDocument>>();
  const indexSeconds = {} as Record<BaselineMode, number>;
  for (const mode of baselineModes) {
    const started = performance.now();
    const index = new MiniSearch<SegmentDocument>(indexOptions[mode]);
    index.addAll(documents);
    indexSeconds[mode] = (performance.now() - started) / 1000;
    indexes.set(mode, index);
  }
  // Attribution as the search API gives it: the URL, else the object key.
  const sources = new Map<string, ResultSource>(
    rows.map((row) => [
      row.segment_id,
      {
        url: row.url,
        object_key: row.storage_key ?? (row.url ? null : row.source_key),
        document_id: row.document_id,
        title: row.title,
      },
    ]),
  );
  return {
    segments: rows.length,
    indexSeconds,
    retrieve: async (mode, question) => {
      const index = indexes.get(mode);
      if (!index) throw new Error(`no baseline mode ${mode}`);
      return {
        sources: index
          .search(question.question)
          .map((result) => sources.get(String(result.id)) as ResultSource),
      };
    },
  };
}
