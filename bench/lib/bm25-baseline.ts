/**
 * The plain BM25 baseline of bench:quality: MiniSearch (a well-kept library) with its default
 * parameters (BM25+ k 1.2, b 0.7, d 0.5; lower-cased words, no stemming; OR of the query's
 * terms) over the segments the knowledge index holds, read back from the database: segment
 * text only, no titles or headings. Pages rank by their best segment: the evaluation keeps
 * each page at its first (best-scoring) segment.
 */
import type { Kysely } from 'kysely';
import MiniSearch from 'minisearch';
import type { DatabaseSchema } from '../../src/db/schema.js';
import type { Retrieve } from '../../src/evaluation/evaluate.js';
import type { ResultSource } from '../../src/evaluation/metrics.js';

export interface Bm25Baseline {
  retrieve: Retrieve;
  segments: number;
  indexSeconds: number;
}

export async function bm25Baseline(db: Kysely<DatabaseSchema>): Promise<Bm25Baseline> {
  const rows = await db
    .selectFrom('knowledge_segments as s')
    .innerJoin('knowledge_documents as d', 'd.document_id', 's.document_id')
    .select(['s.segment_id', 's.text', 'd.document_id', 'd.url', 'd.storage_key', 'd.source_key', 'd.title'])
    .execute();
  const started = performance.now();
  const index = new MiniSearch<{ id: string; text: string }>({ fields: ['text'] });
  index.addAll(rows.map((row) => ({ id: row.segment_id, text: row.text })));
  const indexSeconds = (performance.now() - started) / 1000;
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
    retrieve: async (_mode, question) => ({
      sources: index
        .search(question.question)
        .map((result) => sources.get(String(result.id)) as ResultSource),
    }),
  };
}
