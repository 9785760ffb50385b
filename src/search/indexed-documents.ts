/**
 * What the knowledge index holds, document by document (Weir's own: GET /chat/documents), and
 * the removal of one document from it (DELETE /chat/documents/{id}). Each document is named by
 * its source (URL or object key), title, language, the execution and config that indexed it
 * last, its segment count and when it was last updated. Removing a document removes its
 * segments and embeddings (foreign keys on delete cascade) and, through the triggers of
 * migration 0011, its words from the keyword statistics: search no longer finds it.
 */
import { type Kysely, sql } from 'kysely';
import type { DatabaseSchema } from '../db/schema.js';
import { isoCodeOf, type SearchLanguage } from '../search-index/language.js';
import { segmentsChanged } from '../search-index/segment-changes.js';

export interface IndexedDocument {
  document_id: string;
  source_key: string;
  url: string | null;
  title: string | null;
  /** ISO code when the text search configuration has one (en), else its name (simple). */
  language: string;
  storage_key: string | null;
  execution_id: string;
  config_id: string | null;
  config_name: string | null;
  tag: string | null;
  segment_count: number;
  updated_at: string;
}

export interface DocumentFilter {
  config_id?: string | undefined;
  execution_id?: string | undefined;
  /** A text search configuration name (english), already resolved from an ISO code. */
  language?: SearchLanguage | undefined;
  /** Part of the source key or title, any case. */
  source?: string | undefined;
  limit: number;
  offset: number;
}

interface DocumentRow extends Omit<IndexedDocument, 'updated_at' | 'language'> {
  language: string;
  updated_at: Date | string;
  total: number;
}

/** Documents matching `filter`, most recently updated first, with the count of all that match. */
export async function listIndexedDocuments(
  db: Kysely<DatabaseSchema>,
  filter: DocumentFilter,
): Promise<{ documents: IndexedDocument[]; total: number }> {
  const conditions = [
    filter.config_id ? sql`e.config_id = ${filter.config_id}::uuid` : undefined,
    filter.execution_id ? sql`d.execution_id = ${filter.execution_id}` : undefined,
    filter.language ? sql`d.language = ${filter.language}` : undefined,
    filter.source
      ? sql`(strpos(lower(d.source_key), lower(${filter.source})) > 0 or strpos(lower(coalesce(d.title, '')), lower(${filter.source})) > 0)`
      : undefined,
  ].filter((condition) => condition !== undefined);
  const where = conditions.length > 0 ? sql`where ${sql.join(conditions, sql` and `)}` : sql``;
  const result = await sql<DocumentRow>`
    select d.document_id, d.source_key, d.url, d.title, d.language, d.storage_key, d.execution_id,
           d.updated_at, e.config_id, e.tag, c.name as config_name,
           (select count(*) from knowledge_segments s where s.document_id = d.document_id)::int as segment_count,
           (count(*) over ())::int as total
    from knowledge_documents d
    left join executions e on e.id::text = d.execution_id
    left join pipeline_configs c on c.id = e.config_id
    ${where}
    order by d.updated_at desc, d.document_id
    limit ${filter.limit} offset ${filter.offset}`.execute(db);
  const total = result.rows[0]?.total ?? (filter.offset > 0 ? await countDocuments(db, where) : 0);
  return {
    total,
    documents: result.rows.map(({ total: _total, ...row }) => ({
      ...row,
      language: isoCodeOf(row.language as SearchLanguage) ?? row.language,
      updated_at: new Date(row.updated_at).toISOString(),
    })),
  };
}

/** The count of a page past the last row (the window count is on the rows, and there are none). */
async function countDocuments(db: Kysely<DatabaseSchema>, where: ReturnType<typeof sql>): Promise<number> {
  const result = await sql<{ total: number }>`
    select count(*)::int as total from knowledge_documents d
    left join executions e on e.id::text = d.execution_id
    ${where}`.execute(db);
  return result.rows[0]?.total ?? 0;
}

/** Removes one document with its segments and embeddings; what it removed, or undefined. */
export async function removeIndexedDocument(
  db: Kysely<DatabaseSchema>,
  documentId: string,
): Promise<{ document_id: string; source_key: string; removed_segments: number } | undefined> {
  const result = await sql<{ document_id: string; source_key: string; removed_segments: number }>`
    with counted as (
      select count(*)::int as removed_segments from knowledge_segments where document_id = ${documentId}::uuid
    )
    delete from knowledge_documents d
    using counted
    where d.document_id = ${documentId}::uuid
    returning d.document_id, d.source_key, counted.removed_segments`.execute(db);
  // The embedded keyword index drops the document's segments (segment-changes.ts).
  if (result.rows[0]) segmentsChanged(db, [documentId]);
  return result.rows[0];
}
