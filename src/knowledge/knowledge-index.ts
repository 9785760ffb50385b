/**
 * The write side of the knowledge index (schema: migration 0005). Ingestion adapters call it;
 * search reads the same tables. Every write is an upsert keyed by ids derived from the source
 * URL and segment position, so re-ingesting a page replaces its segments and vectors.
 */
import { type Kysely, sql } from 'kysely';
import type { DatabaseSchema } from '../db/schema.js';
import { documentIdFor, segmentIdFor } from './ids.js';
import { type SearchLanguage, toSearchLanguage } from './language.js';

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
    options: { executionId: string; total?: number | undefined },
  ): Promise<string[]>;
  upsertEmbeddings(embeddings: readonly EmbeddingInput[]): Promise<void>;
  /** True when pgvector is installed, so vector search can run. */
  vectorSupport(): Promise<boolean>;
}

export function createKnowledgeIndex(
  db: Kysely<DatabaseSchema>,
  now: () => Date = () => new Date(),
): KnowledgeIndex {
  let vectorSupport: Promise<boolean> | undefined;
  /** model -> dimensions already registered (and indexed) in this process. */
  const knownModels = new Map<string, number>();

  function hasVectorSupport(): Promise<boolean> {
    vectorSupport ??= sql<{
      present: boolean;
    }>`select exists (select 1 from pg_extension where extname = 'vector') as present`
      .execute(db)
      .then((result) => Boolean(result.rows[0]?.present));
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
      const indexName = (await hasVectorSupport()) ? vectorIndexName(model) : null;
      await db
        .insertInto('knowledge_models')
        .values({ model, dimensions, vector_index: indexName, created_at: now() })
        .onConflict((conflict) => conflict.column('model').doNothing())
        .execute();
      if (indexName) {
        // HNSW over the cast of this model's rows only: one index per model and dimension count.
        await sql
          .raw(
            `create index if not exists ${indexName} on knowledge_embeddings using hnsw ((embedding::vector(${dimensions})) vector_cosine_ops) where model = ${quoteLiteral(model)}`,
          )
          .execute(db);
      }
    }
    knownModels.set(model, dimensions);
  }

  return {
    async upsertDocument(document) {
      const documentId = documentIdFor(document.sourceKey);
      const timestamp = now();
      await db
        .insertInto('knowledge_documents')
        .values({
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
        })
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
      return documentId;
    },

    async upsertSegments(documentId, segments, options) {
      const timestamp = now();
      const document = await db
        .selectFrom('knowledge_documents')
        .select('language')
        .where('document_id', '=', documentId)
        .executeTakeFirst();
      if (!document) throw new Error(`document ${documentId} is not in the knowledge index`);
      const ids: string[] = [];
      await db.transaction().execute(async (transaction) => {
        for (const segment of segments) {
          const segmentId = segmentIdFor(documentId, segment.segmentIndex);
          ids.push(segmentId);
          const language = segment.language ?? toSearchLanguage(document.language) ?? 'simple';
          const headings = segment.headingPath.join(' ');
          // Headings weigh more (A) than body text (B) in ts_rank.
          const searchVector = sql`setweight(to_tsvector(${language}::regconfig, ${headings}), 'A') || setweight(to_tsvector(${language}::regconfig, ${segment.text}), 'B')`;
          await transaction
            .insertInto('knowledge_segments')
            .values({
              segment_id: segmentId,
              document_id: documentId,
              segment_index: segment.segmentIndex,
              text: segment.text,
              token_count: segment.tokenCount,
              heading_path: JSON.stringify(segment.headingPath),
              language,
              search_vector: searchVector as never,
              execution_id: options.executionId,
              updated_at: timestamp,
            })
            .onConflict((conflict) =>
              conflict.column('segment_id').doUpdateSet((excluded) => ({
                text: excluded.ref('excluded.text'),
                token_count: excluded.ref('excluded.token_count'),
                heading_path: excluded.ref('excluded.heading_path'),
                language: excluded.ref('excluded.language'),
                search_vector: excluded.ref('excluded.search_vector'),
                execution_id: excluded.ref('excluded.execution_id'),
                updated_at: excluded.ref('excluded.updated_at'),
              })),
            )
            .execute();
        }
        if (options.total !== undefined) {
          await transaction
            .deleteFrom('knowledge_segments')
            .where('document_id', '=', documentId)
            .where('segment_index', '>=', options.total)
            .execute();
        }
      });
      return ids;
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
            embedding: Array.from(embedding.vector),
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
  };
}

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
