/**
 * The write side of the knowledge index (schema: migration 0005). Ingestion adapters call it;
 * search reads the same tables. Every write is an upsert keyed by ids derived from the source
 * URL and segment position, so re-ingesting a page replaces its segments and vectors.
 * Documents, segments and deletion are here; embeddings, the model registry and the HNSW
 * index builds are in knowledge-vectors.ts.
 */
import { type Insertable, type Kysely, sql } from 'kysely';
import { int4Array, textArray, uuidArray } from '../db/array-parameter.js';
import type { DatabaseSchema, KnowledgeDocumentTable } from '../db/schema.js';
import { documentIdFor, segmentIdFor } from './ids.js';
import { createVectorStore } from './knowledge-vectors.js';
import { pageIdentity, type SearchLanguage, toSearchLanguage } from './language.js';
import { type LanguageDetector, loadLanguageDetector } from './language-detection.js';
import { headingField, searchableText } from './searchable-text.js';
import { segmentsChanged } from './segment-changes.js';

export { hnswOptions, vectorIndexName } from './knowledge-vectors.js';

export interface DocumentInput {
  /** Identity of the document: its URL, or the object key for content without one. */
  sourceKey: string;
  url?: string | undefined;
  title?: string | undefined;
  language: SearchLanguage;
  /** Key of the canonical markdown object, when stored. */
  storageKey?: string | undefined;
  frontMatter?: Record<string, unknown> | undefined;
  /** Declared translations, code -> absolute URL: with the URL, they name the page this is a copy of (pageIdentity). */
  alternates?: Readonly<Record<string, string>> | undefined;
  executionId: string;
  routeId?: string | undefined;
}

export interface SegmentInput {
  segmentIndex: number;
  text: string;
  tokenCount: number;
  headingPath: readonly string[];
  /** Defaults to the document's language. */
  language?: SearchLanguage | undefined;
}

export interface EmbeddingInput {
  segmentId: string;
  model: string;
  vector: Float32Array | readonly number[];
  vectorStorageKey?: string | undefined;
  executionId: string;
}

export interface DocumentSegments {
  document: DocumentInput;
  segments: readonly SegmentInput[];
  /** Segments at positions `total` and above are removed. */
  total?: number | undefined;
}

interface SegmentGroup {
  documentId: string;
  /** The document's title, weighted with the headings when known. */
  title?: string | undefined;
  segments: readonly SegmentInput[];
  language: SearchLanguage;
  executionId: string;
  total?: number | undefined;
}

interface SegmentRow {
  segmentId: string;
  title: string | undefined;
  documentId: string;
  segment: SegmentInput;
  language: SearchLanguage;
  executionId: string;
}

export interface KnowledgeIndex {
  /** Inserts or updates the document; returns its id. */
  upsertDocument(document: DocumentInput): Promise<string>;
  /**
   * Inserts or updates segments of a document (ids returned in input order). With `total`,
   * segments at positions `total` and above are removed: the page got shorter.
   */
  upsertSegments(
    documentId: string,
    segments: readonly SegmentInput[],
    options: {
      executionId: string;
      total?: number | undefined;
      /** The document's language, when the caller knows it (saves a look-up). */
      language?: SearchLanguage | undefined;
    },
  ): Promise<string[]>;
  /**
   * Documents and their segments in one transaction of three statements, whatever the count:
   * the batch form of upsertDocument + upsertSegments. Segment ids per entry, in input order.
   */
  indexDocuments(entries: readonly DocumentSegments[]): Promise<string[][]>;
  upsertEmbeddings(embeddings: readonly EmbeddingInput[]): Promise<void>;
  /**
   * Removes documents (with their segments and embeddings) named by source key, or whose
   * source key starts with one of `sourceKeyPrefixes`: a source that no longer exists (a wiki
   * page deleted, with its attachments). Returns how many were removed.
   */
  removeDocuments(sourceKeys: readonly string[], sourceKeyPrefixes?: readonly string[]): Promise<number>;
  /** True when pgvector is installed, so vector search can run. */
  vectorSupport(): Promise<boolean>;
  /**
   * Creates the HNSW index of every model that has none yet (pgvector only); returns the
   * models indexed. Called when an execution ends; safe to call from several instances.
   */
  buildVectorIndexes(): Promise<string[]>;
}

export function createKnowledgeIndex(
  db: Kysely<DatabaseSchema>,
  now: () => Date = () => new Date(),
): KnowledgeIndex {
  return {
    async removeDocuments(sourceKeys, sourceKeyPrefixes = []) {
      const removed = await removeDocuments(db, sourceKeys, sourceKeyPrefixes);
      segmentsChanged(db, removed);
      return removed.length;
    },

    async upsertDocument(document) {
      const [documentId] = await writeDocuments(db, [document], now);
      return documentId as string;
    },

    async upsertSegments(documentId, segments, options) {
      const group = {
        documentId,
        segments,
        language: options.language ?? (await documentLanguage(db, documentId)),
        executionId: options.executionId,
        total: options.total,
      };
      const [ids] = await db.transaction().execute((transaction) => writeSegments(transaction, [group], now));
      // After the commit: the embedded keyword index re-reads the document (segment-changes.ts).
      segmentsChanged(db, [documentId]);
      return ids as string[];
    },

    async indexDocuments(entries) {
      if (entries.length === 0) return [];
      let written: string[] = [];
      const ids = await db.transaction().execute(async (transaction) => {
        const documentIds = await writeDocuments(
          transaction,
          entries.map((entry) => entry.document),
          now,
        );
        written = documentIds;
        return writeSegments(
          transaction,
          entries.map((entry, position) => ({
            documentId: documentIds[position] as string,
            title: entry.document.title,
            segments: entry.segments,
            language: entry.document.language,
            executionId: entry.document.executionId,
            total: entry.total,
          })),
          now,
        );
      });
      segmentsChanged(db, written);
      return ids;
    },

    ...createVectorStore(db, now),
  };
}

/** Removes documents by source key or key prefix (segments and embeddings cascade); their ids. */
async function removeDocuments(
  db: Kysely<DatabaseSchema>,
  sourceKeys: readonly string[],
  sourceKeyPrefixes: readonly string[],
): Promise<string[]> {
  if (sourceKeys.length === 0 && sourceKeyPrefixes.length === 0) return [];
  // Prefixes as LIKE patterns with their own wildcards escaped.
  const patterns = sourceKeyPrefixes.map((prefix) => `${prefix.replace(/[\\%_]/g, '\\$&')}%`);
  const result = await sql<{ document_id: string }>`
    delete from knowledge_documents
    where source_key = any(${[...sourceKeys]}::text[])
       or source_key like any(${patterns}::text[])
    returning document_id`.execute(db);
  return result.rows.map((row) => row.document_id);
}

/** The stored document's language, for segments whose caller did not give it. */
async function documentLanguage(db: Kysely<DatabaseSchema>, documentId: string): Promise<SearchLanguage> {
  const document = await db
    .selectFrom('knowledge_documents')
    .select('language')
    .where('document_id', '=', documentId)
    .executeTakeFirst();
  if (!document) throw new Error(`document ${documentId} is not in the knowledge index`);
  return toSearchLanguage(document.language) ?? 'simple';
}

/** One multi-row upsert of documents (the last of a repeated document wins); their ids. */
async function writeDocuments(
  executor: Kysely<DatabaseSchema>,
  documents: readonly DocumentInput[],
  now: () => Date,
): Promise<string[]> {
  const timestamp = now();
  const rows = new Map<string, Insertable<KnowledgeDocumentTable>>();
  const ids = documents.map((document) => {
    const documentId = documentIdFor(document.sourceKey);
    const page = pageIdentity(document.url ?? document.sourceKey, document.alternates, document.language);
    rows.set(documentId, {
      document_id: documentId,
      source_key: document.sourceKey,
      url: document.url ?? null,
      title: document.title ?? null,
      language: document.language,
      storage_key: document.storageKey ?? null,
      page_key: page?.page ?? null,
      page_language: page?.language ?? null,
      front_matter: JSON.stringify(document.frontMatter ?? {}),
      execution_id: document.executionId,
      route_id: document.routeId ?? null,
      created_at: timestamp,
      updated_at: timestamp,
    });
    return documentId;
  });
  if (rows.size === 0) return ids;
  await executor
    .insertInto('knowledge_documents')
    .values([...rows.values()])
    .onConflict((conflict) =>
      conflict.column('document_id').doUpdateSet((excluded) => ({
        url: excluded.ref('excluded.url'),
        title: sql`coalesce(excluded.title, knowledge_documents.title)`,
        language: excluded.ref('excluded.language'),
        storage_key: sql`coalesce(excluded.storage_key, knowledge_documents.storage_key)`,
        page_key: excluded.ref('excluded.page_key'),
        page_language: excluded.ref('excluded.page_language'),
        front_matter: excluded.ref('excluded.front_matter'),
        execution_id: excluded.ref('excluded.execution_id'),
        route_id: excluded.ref('excluded.route_id'),
        updated_at: excluded.ref('excluded.updated_at'),
      })),
    )
    .execute();
  return ids;
}

/**
 * Segments of several documents in one upsert (columns bound once each as arrays, the
 * search vector computed by the database), then one delete of the tails past each `total`.
 * A segment repeated in the input (a message delivered twice) is written once: PostgreSQL
 * refuses to update a row twice in one statement.
 */
async function writeSegments(
  executor: Kysely<DatabaseSchema>,
  groups: readonly SegmentGroup[],
  now: () => Date,
): Promise<string[][]> {
  const detector = await loadLanguageDetector();
  const timestamp = now().toISOString();
  const rows = new Map<string, SegmentRow>();
  const ids = groups.map((group) =>
    group.segments.map((segment) => {
      const segmentId = segmentIdFor(group.documentId, segment.segmentIndex);
      rows.set(segmentId, {
        segmentId,
        documentId: group.documentId,
        title: group.title,
        segment,
        language: segment.language ?? segmentLanguage(detector, segment.text, group.language),
        executionId: group.executionId,
      });
      return segmentId;
    }),
  );
  const values = [...rows.values()];
  const trimmed = groups.filter((group) => group.total !== undefined);
  /** Per document to trim, its highest segment index before this write; all when unknown. */
  let lastStored: Map<string, number> | undefined;
  if (values.length > 0) {
    // Title and headings (A) come before the text (B) in the vector, and count more in BM25F
    // (src/search/keyword-sql.ts). Both are indexed without link targets and escapes. The
    // outer select reads the documents' last segment indexes in the same statement: it sees
    // the table as it was before the insert, and after every commit before the statement
    // began (a concurrent writer of the same document committed before ours got its row lock).
    const result = await sql<{ document_id: string; last_index: number }>`
      with written as (
      insert into knowledge_segments (segment_id, document_id, segment_index, text, token_count,
        heading_path, language, search_vector, execution_id, updated_at)
      select v.segment_id, v.document_id, v.segment_index, v.text, v.token_count, v.heading_path::jsonb,
        v.language,
        setweight(to_tsvector(v.language::regconfig, v.headings), 'A')
          || setweight(to_tsvector(v.language::regconfig, v.search_text), 'B'),
        v.execution_id, ${timestamp}::timestamptz
      from unnest(
        ${uuidArray(values.map((row) => row.segmentId))}::uuid[],
        ${uuidArray(values.map((row) => row.documentId))}::uuid[],
        ${int4Array(values.map((row) => row.segment.segmentIndex))}::int[],
        ${textArray(values.map((row) => row.segment.text))}::text[],
        ${int4Array(values.map((row) => row.segment.tokenCount))}::int[],
        ${textArray(values.map((row) => JSON.stringify(row.segment.headingPath)))}::text[],
        ${textArray(values.map((row) => headingField(row.segment.headingPath, row.title)))}::text[],
        ${textArray(values.map((row) => searchableText(row.segment.text)))}::text[],
        ${textArray(values.map((row) => row.language))}::text[],
        ${textArray(values.map((row) => row.executionId))}::text[]
      ) as v(segment_id, document_id, segment_index, text, token_count, heading_path, headings,
        search_text, language, execution_id)
      on conflict (segment_id) do update set
        text = excluded.text, token_count = excluded.token_count, heading_path = excluded.heading_path,
        language = excluded.language, search_vector = excluded.search_vector,
        execution_id = excluded.execution_id, updated_at = excluded.updated_at
      returning 1)
      select s.document_id, max(s.segment_index) as last_index from knowledge_segments as s
      where s.document_id = any(${uuidArray(trimmed.map((group) => group.documentId))}::uuid[])
      group by s.document_id`.execute(executor);
    lastStored = new Map(result.rows.map((row) => [row.document_id, Number(row.last_index)]));
  }
  // A tail can exist only where the document held a segment at `total` or past it, or where
  // this write put one there (a message of an older, longer version of the page in the batch).
  const trims = trimmed.filter(
    (group) =>
      lastStored === undefined ||
      (lastStored.get(group.documentId) ?? -1) >= (group.total as number) ||
      group.segments.some((segment) => segment.segmentIndex >= (group.total as number)),
  );
  if (trims.length > 0) {
    await sql`
      delete from knowledge_segments as s
      using unnest(
        ${trims.map((group) => group.documentId)}::uuid[],
        ${int4Array(trims.map((group) => group.total as number))}::int[]
      ) as t(document_id, total)
      where s.document_id = t.document_id and s.segment_index >= t.total`.execute(executor);
  }
  return ids;
}

/**
 * A segment keeps its document's language unless its own text says otherwise with confidence;
 * `simple` documents (nothing to go on) are not second-guessed per segment either.
 */
function segmentLanguage(detector: LanguageDetector, text: string, documentLanguage: SearchLanguage) {
  return documentLanguage === 'simple' ? documentLanguage : detector.segment(text, documentLanguage);
}
