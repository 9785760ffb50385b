/**
 * What an ingestion left in the database, as one md5 per table (bench:ingest prints it), so a
 * change to how the pipeline runs can show it indexed the same data: segments with their
 * search vectors, embeddings, documents, term statistics and totals, and the stored objects'
 * contents (not the transient payload objects: the scraper's output carries the answer's Date
 * header). Ids and keys that carry the execution's or a message's random id are left out
 * (message ids derive from the init message's, so each run's differ); what they point at is
 * compared through the content (storage objects by sha256 and size).
 */
import { sql } from 'kysely';
import type { Database } from '../../src/db/database.js';

const tables: Record<string, string> = {
  segments: `select md5(coalesce(string_agg(concat_ws('|', segment_id, document_id, segment_index, text, token_count, heading_path::text, language, search_vector::text), E'\\n' order by segment_id), '')) as digest from knowledge_segments`,
  embeddings: `select md5(coalesce(string_agg(concat_ws('|', segment_id, model, dimensions, embedding::text), E'\\n' order by segment_id, model), '')) as digest from knowledge_embeddings`,
  documents: `select md5(coalesce(string_agg(concat_ws('|', document_id, source_key, url, title, language, front_matter::text), E'\\n' order by document_id), '')) as digest from knowledge_documents`,
  terms: `select md5(coalesce(string_agg(concat_ws('|', lexeme, segments), E'\\n' order by lexeme), '')) as digest from knowledge_terms`,
  totals: `select md5(coalesce(string_agg(concat_ws('|', language, segments, tokens), E'\\n' order by language), '')) as digest from knowledge_segment_totals`,
  objects: `select md5(coalesce(string_agg(concat_ws('|', sha256, size, content_type), E'\\n' order by sha256, size), '')) as digest from storage_objects where key not like '%/_payloads/%'`,
};

export async function dataDigest(database: Database): Promise<string> {
  const parts: string[] = [];
  for (const [name, statement] of Object.entries(tables)) {
    const result = await sql<{ digest: string }>`${sql.raw(statement)}`.execute(database.db);
    parts.push(`${name} ${result.rows[0]?.digest.slice(0, 12)}`);
  }
  return parts.join(', ');
}
