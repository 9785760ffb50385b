/**
 * The write side of the knowledge index (schema: migration 0005). Ingestion adapters call it;
 * search reads the same tables. Every write is an upsert keyed by ids derived from the source
 * URL and segment position, so re-ingesting a page replaces its segments and vectors.
 */
import { type Insertable, type Kysely, sql } from 'kysely';
import { int4Array, realArray, textArray, uuidArray } from '../db/array-parameter.js';
import { pgvectorInstalled } from '../db/pgvector.js';
import type { DatabaseSchema, KnowledgeDocumentTable } from '../db/schema.js';
import { documentIdFor, segmentIdFor } from './ids.js';
import { type SearchLanguage, toSearchLanguage } from './language.js';
import { type LanguageDetector, loadLanguageDetector } from './language-detection.js';
import { headingField, searchableText } from './searchable-text.js';

export interface DocumentInput {
  /** Identity of the document: its URL, or the object key for content without one. */
  sourceKey: string;
  url?: string | undefined;
  title?: string | undefined;
  language: SearchLanguage;
  /** Key of the canonical markdown object, when stored. */
  storageKey?: string | undefined;
  frontMatter?: Record<string, unknown> | undefined;
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
  let vectorSupport: Promise<boolean> | undefined;
  /** model -> dimensions already registered (and indexed) in this process. */
  const knownModels = new Map<string, number>();

  let building: Promise<string[]> = Promise.resolve([]);

  async function buildPendingIndexes(): Promise<string[]> {
    if (!(await hasVectorSupport())) return [];
    const pending = await db
      .selectFrom('knowledge_models')
      .select(['model', 'dimensions'])
      .where('vector_index', 'is', null)
      .execute();
    const built: string[] = [];
    for (const { model, dimensions } of pending) {
      const indexName = vectorIndexName(model);
      try {
        // HNSW over the cast of this model's rows only: one index per model and dimension count.
        await sql
          .raw(
            `create index if not exists ${indexName} on knowledge_embeddings using hnsw ((embedding::vector(${dimensions})) vector_cosine_ops) with (m = ${hnswOptions.m}, ef_construction = ${hnswOptions.efConstruction}) where model = ${quoteLiteral(model)}`,
          )
          .execute(db);
      } catch (error) {
        // Another instance created it between our check and our create: fine if it exists now.
        const exists = await sql<{
          present: boolean;
        }>`select exists (select 1 from pg_indexes where indexname = ${indexName}) as present`.execute(db);
        if (!exists.rows[0]?.present) throw error;
      }
      await db
        .updateTable('knowledge_models')
        .set({ vector_index: indexName })
        .where('model', '=', model)
        .execute();
      built.push(model);
    }
    return built;
  }

  function hasVectorSupport(): Promise<boolean> {
    vectorSupport ??= pgvectorInstalled(db);
    return vectorSupport;
  }

  async function registerModel(model: string, dimensions: number): Promise<void> {
    const known = knownModels.get(model);
    if (known === dimensions) return;
    const existing = await db
      .selectFrom('knowledge_models')
      .selectAll()
      .where('model', '=', model)
      .executeTakeFirst();
    if (existing && existing.dimensions !== dimensions) {
      throw new Error(
        `embedding model ${model} has ${existing.dimensions} dimensions in the index, not ${dimensions}: use a new model name after changing its dimensions`,
      );
    }
    if (!existing) {
      // The HNSW index is not made here: buildVectorIndexes makes it once the first execution
      // that wrote this model's vectors has ended. Building over loaded rows costs about an
      // eighth of inserting them one by one into a growing graph (docs/benchmarks.md);
      // search does an exact scan of the model's rows meanwhile.
      await db
        .insertInto('knowledge_models')
        .values({ model, dimensions, vector_index: null, created_at: now() })
        .onConflict((conflict) => conflict.column('model').doNothing())
        .execute();
    }
    knownModels.set(model, dimensions);
  }

  /** One multi-row upsert of documents (the last of a repeated document wins); their ids. */
  async function writeDocuments(
    executor: Kysely<DatabaseSchema>,
    documents: readonly DocumentInput[],
  ): Promise<string[]> {
    const timestamp = now();
    const rows = new Map<string, Insertable<KnowledgeDocumentTable>>();
    const ids = documents.map((document) => {
      const documentId = documentIdFor(document.sourceKey);
      rows.set(documentId, {
        document_id: documentId,
        source_key: document.sourceKey,
        url: document.url ?? null,
        title: document.title ?? null,
        language: document.language,
        storage_key: document.storageKey ?? null,
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
    if (values.length > 0) {
      // Title and headings (A) come before the text (B) in the vector, and count more in BM25F
      // (src/search/keyword-sql.ts). Both are indexed without link targets and escapes.
      await sql`
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
          execution_id = excluded.execution_id, updated_at = excluded.updated_at`.execute(executor);
    }
    const trims = groups.filter((group) => group.total !== undefined);
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

  return {
    async removeDocuments(sourceKeys, sourceKeyPrefixes = []) {
      if (sourceKeys.length === 0 && sourceKeyPrefixes.length === 0) return 0;
      // Prefixes as LIKE patterns with their own wildcards escaped.
      const patterns = sourceKeyPrefixes.map((prefix) => `${prefix.replace(/[\\%_]/g, '\\$&')}%`);
      const result = await sql<{ document_id: string }>`
        delete from knowledge_documents
        where source_key = any(${[...sourceKeys]}::text[])
           or source_key like any(${patterns}::text[])
        returning document_id`.execute(db);
      return result.rows.length;
    },
    async upsertDocument(document) {
      const [documentId] = await writeDocuments(db, [document]);
      return documentId as string;
    },

    async upsertSegments(documentId, segments, options) {
      let language = options.language;
      if (!language) {
        const document = await db
          .selectFrom('knowledge_documents')
          .select('language')
          .where('document_id', '=', documentId)
          .executeTakeFirst();
        if (!document) throw new Error(`document ${documentId} is not in the knowledge index`);
        language = toSearchLanguage(document.language) ?? 'simple';
      }
      const group = {
        documentId,
        segments,
        language,
        executionId: options.executionId,
        total: options.total,
      };
      const [ids] = await db.transaction().execute((transaction) => writeSegments(transaction, [group]));
      return ids as string[];
    },

    async indexDocuments(entries) {
      if (entries.length === 0) return [];
      return db.transaction().execute(async (transaction) => {
        const documentIds = await writeDocuments(
          transaction,
          entries.map((entry) => entry.document),
        );
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
        );
      });
    },

    async upsertEmbeddings(embeddings) {
      if (embeddings.length === 0) return;
      for (const embedding of embeddings) await registerModel(embedding.model, embedding.vector.length);
      const timestamp = now();
      await db
        .insertInto('knowledge_embeddings')
        .values(
          embeddings.map((embedding) => ({
            segment_id: embedding.segmentId,
            model: embedding.model,
            dimensions: embedding.vector.length,
            embedding: realArray(embedding.vector),
            vector_storage_key: embedding.vectorStorageKey ?? null,
            execution_id: embedding.executionId,
            updated_at: timestamp,
          })),
        )
        .onConflict((conflict) =>
          conflict.columns(['segment_id', 'model']).doUpdateSet((excluded) => ({
            dimensions: excluded.ref('excluded.dimensions'),
            embedding: excluded.ref('excluded.embedding'),
            vector_storage_key: excluded.ref('excluded.vector_storage_key'),
            execution_id: excluded.ref('excluded.execution_id'),
            updated_at: excluded.ref('excluded.updated_at'),
          })),
        )
        .execute();
    },

    vectorSupport: hasVectorSupport,

    buildVectorIndexes() {
      // One build at a time in this process; another instance racing us is handled below.
      building = building.then(buildPendingIndexes, buildPendingIndexes);
      return building;
    },
  };
}

/**
 * HNSW build parameters of new model indexes (pgvector's defaults are m 16, ef_construction 64).
 * Each inserted vector costs a graph search and neighbour updates, and on PGlite that is most
 * of ingestion's database time. Measured on the PostgreSQL manual (7,274 segments, hash
 * embedder, 384 dimensions, 60 queries, ef_search 50, recall@10 against an exact scan):
 * m 16 / 64: 5.95 ms CPU per insert, recall 0.883; m 12 / 48: 3.88 ms, 0.863;
 * m 8 / 64: 2.21 ms, 0.813. m 12 keeps recall within two points for a third less insert cost;
 * m 8 lost seven points. Existing indexes keep the parameters they were built with.
 */
export const hnswOptions = { m: 12, efConstruction: 48 } as const;

/** A safe, stable index name for a model name of any characters. */
export function vectorIndexName(model: string): string {
  const slug = model
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 30);
  return `knowledge_vectors_${slug}_${documentIdFor(model).slice(0, 8)}`;
}

function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * A segment keeps its document's language unless its own text says otherwise with confidence;
 * `simple` documents (nothing to go on) are not second-guessed per segment either.
 */
function segmentLanguage(detector: LanguageDetector, text: string, documentLanguage: SearchLanguage) {
  return documentLanguage === 'simple' ? documentLanguage : detector.segment(text, documentLanguage);
}
