/**
 * The embedding model a vector search uses (see search-service.ts): configured, with pgvector
 * installed, and indexed with the dimensions it is configured with.
 */
import type { Kysely, Selectable } from 'kysely';
import type { DatabaseSchema, KnowledgeModelTable } from '../db/schema.js';
import type { EmbedderCatalog } from '../embedding/embedder.js';
import { AppError } from '../errors.js';

const MODEL_CACHE_MS = 30_000;

/**
 * A model's row, with how many vectors it has (which decides exact or HNSW ranking) and when
 * they were counted (Date.now() as the count was asked for: the in-memory vectors compare).
 */
type KnowledgeModelRow = Selectable<KnowledgeModelTable> & { vectors: number; countedAt: number };

export function createModelResolver(
  db: Kysely<DatabaseSchema>,
  embedders: EmbedderCatalog | undefined,
  hasVectorSupport: () => Promise<boolean>,
) {
  /**
   * The model's row in knowledge_models (its indexed dimensions) and its vector count. A model found is cached
   * briefly, which saves every vector search a round trip; one not yet indexed is looked up
   * again each time, so its first segments are searched as soon as they are written.
   */
  const indexedModels = new Map<string, { at: number; row: Promise<KnowledgeModelRow | undefined> }>();
  function indexedModel(name: string): Promise<KnowledgeModelRow | undefined> {
    const cached = indexedModels.get(name);
    if (cached && Date.now() - cached.at < MODEL_CACHE_MS) return cached.row;
    const countedAt = Date.now();
    const row = db
      .selectFrom('knowledge_models')
      .selectAll()
      .select((eb) =>
        eb
          .selectFrom('knowledge_embeddings')
          .select((inner) => inner.fn.countAll<string>().as('count'))
          .whereRef('knowledge_embeddings.model', '=', 'knowledge_models.model')
          .as('vectors'),
      )
      .where('model', '=', name)
      .executeTakeFirst()
      .then((found) => found && { ...found, vectors: Number(found.vectors), countedAt });
    indexedModels.set(name, { at: countedAt, row });
    row.then(
      (found) => {
        if (!found) indexedModels.delete(name);
      },
      () => indexedModels.delete(name),
    );
    return row;
  }

  async function resolveModel(requested: string | undefined) {
    if (!embedders || embedders.names.length === 0) {
      throw new AppError('search_unavailable', 'no embedding model is configured (setting embedding_models)');
    }
    const name = requested ?? embedders.defaultModel;
    const embedder = embedders.get(name);
    if (!embedder) {
      throw new AppError(
        'search_request_invalid',
        `unknown embedding model ${JSON.stringify(name)}; configured: ${embedders.names.join(', ')}`,
      );
    }
    if (!(await hasVectorSupport())) {
      throw new AppError(
        'vector_search_unavailable',
        'vector search needs the pgvector extension, which this PostgreSQL server does not have: install pgvector, use the embedded database, or use keyword search',
      );
    }
    const indexed = await indexedModel(name);
    if (indexed && indexed.dimensions !== embedder.dimensions) {
      throw new AppError(
        'search_unavailable',
        `embedding model ${name} is configured with ${embedder.dimensions} dimensions but indexed with ${indexed.dimensions}`,
      );
    }
    return { embedder, indexed };
  }

  return resolveModel;
}
