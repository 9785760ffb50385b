/**
 * The vector side of the knowledge index (src/search-index/knowledge-index.ts): embedding
 * upserts, the registry of models and their dimensions (knowledge_models), and the HNSW index
 * of each model, built once the execution that loaded its vectors has ended.
 */
import { type Kysely, sql } from 'kysely';
import { realArray } from '../db/array-parameter.js';
import { pgvectorInstalled } from '../db/pgvector.js';
import type { DatabaseSchema } from '../db/schema.js';
import { documentIdFor } from './ids.js';
import type { KnowledgeIndex } from './knowledge-index.js';
import { embeddingsChanged } from './segment-changes.js';

export type VectorStore = Pick<KnowledgeIndex, 'upsertEmbeddings' | 'vectorSupport' | 'buildVectorIndexes'>;

export function createVectorStore(db: Kysely<DatabaseSchema>, now: () => Date): VectorStore {
  let vectorSupport: Promise<boolean> | undefined;
  const registerModel = createModelRegistry(db, now);
  let building: Promise<string[]> = Promise.resolve([]);

  function hasVectorSupport(): Promise<boolean> {
    vectorSupport ??= pgvectorInstalled(db);
    return vectorSupport;
  }
  async function buildPending(): Promise<string[]> {
    if (!(await hasVectorSupport())) return [];
    return buildPendingIndexes(db);
  }

  return {
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
      embeddingsChanged(
        db,
        embeddings.map((embedding) => embedding.segmentId),
      );
    },

    vectorSupport: hasVectorSupport,

    buildVectorIndexes() {
      // One build at a time in this process; another instance racing us is handled in
      // buildPendingIndexes.
      building = building.then(buildPending, buildPending);
      return building;
    },
  };
}

/**
 * Registers a model with its dimension count on first sight (once per process and model);
 * throws when the index already holds the model with another count.
 */
function createModelRegistry(
  db: Kysely<DatabaseSchema>,
  now: () => Date,
): (model: string, dimensions: number) => Promise<void> {
  /** model -> dimensions already registered in this process. */
  const knownModels = new Map<string, number>();
  return async (model, dimensions) => {
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
  };
}

/** Creates the HNSW index of every model without one (pgvector installed); the models indexed. */
async function buildPendingIndexes(db: Kysely<DatabaseSchema>): Promise<string[]> {
  const pending = await db
    .selectFrom('knowledge_models')
    .select(['model', 'dimensions'])
    .where('vector_index', 'is', null)
    .execute();
  const built: string[] = [];
  for (const { model, dimensions } of pending) {
    const indexName = vectorIndexName(model);
    try {
      await db.transaction().execute(async (transaction) => {
        // pgvector builds the graph in memory while it fits in maintenance_work_mem and then
        // inserts the remaining rows one by one through the buffer manager, several times
        // slower per row: at the default 64 MB a 40,000-vector build (384 dimensions) spilled
        // after 33,423 rows and cost 42 s of CPU against 24 s in memory (docs/benchmarks.md).
        // So this one build gets the memory its graph needs (set local: the session keeps its
        // setting), as pgvector recommends for bulk loads.
        const sizing = await sql<{ rows: string; current_kb: string }>`
          select (select count(*) from knowledge_embeddings where model = ${model}) as rows,
                 (select setting from pg_settings where name = 'maintenance_work_mem') as current_kb`.execute(
          transaction,
        );
        const row = sizing.rows[0];
        const memoryKb = hnswBuildMemoryKb(Number(row?.rows ?? 0), dimensions, Number(row?.current_kb ?? 0));
        await sql`select set_config('maintenance_work_mem', ${`${memoryKb}kB`}, true)`.execute(transaction);
        // HNSW over the cast of this model's rows only: one index per model and dimension count.
        await sql
          .raw(
            `create index if not exists ${indexName} on knowledge_embeddings using hnsw ((embedding::vector(${dimensions})) vector_cosine_ops) with (m = ${hnswOptions.m}, ef_construction = ${hnswOptions.efConstruction}) where model = ${quoteLiteral(model)}`,
          )
          .execute(transaction);
      });
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

/**
 * HNSW build parameters of new model indexes (pgvector's defaults are m 16, ef_construction 64).
 * Each inserted vector costs a graph search and neighbour updates, and on PGlite that is most
 * of ingestion's database time. Measured on the PostgreSQL manual (7,274 segments, hash
 * embedder, 384 dimensions, 60 queries, ef_search 50, recall@10 against an exact scan):
 * m 16 / 64: 5.95 ms CPU per insert, recall 0.883; m 12 / 48: 3.88 ms, 0.863;
 * m 8 / 64: 2.21 ms, 0.813. m 12 keeps recall within two points for a third less insert cost;
 * m 8 lost seven points. Existing indexes keep the parameters they were built with. The build
 * over loaded rows (issue 35, `npm run bench:hnsw-build -- 20000`, synthetic segments, 100
 * queries, ef_search 100, CPU at load 15-20): 12 / 48: 12.5 s, recall@10 0.694; 12 / 32: 9.0 s,
 * 0.658; 8 / 48: 8.8 s, 0.575; 16 / 32: 13.2 s, 0.736. The cheaper ones lose recall. At
 * 40,000, two runs each: 16 / 32 24.7-29.2 s, 0.557-0.573, against 12 / 48's 27.0-30.9 s,
 * 0.493-0.505: more recall for no more build CPU, not yet judged on the cost of later inserts,
 * search latency and bench:quality.
 */
export const hnswOptions = { m: 12, efConstruction: 48 } as const;

/**
 * Upper bound of maintenance_work_mem for one HNSW build, in kB. Embedded PGlite is 32-bit
 * WebAssembly (at most 4 GB, and the memory it grows to stays with its thread until it is
 * recycled); past this a build spills to the slower row-by-row path instead of failing.
 */
export const hnswBuildMemoryCapKb = 1024 * 1024;

/**
 * maintenance_work_mem (kB) for building the HNSW graph of `rows` vectors of `dimensions` in
 * memory: never below `currentKb` (an operator's larger setting stays), at most
 * hnswBuildMemoryCapKb. Per vector pgvector holds the value (4 bytes a dimension and a
 * header), up to 2m neighbours on layer 0 at 16 bytes each and its element; measured at 384
 * dimensions and m 12, the graph outgrew 64 MB after 33,423 rows (2,008 bytes a row) against
 * 2,192 estimated here before the quarter of headroom.
 */
export function hnswBuildMemoryKb(rows: number, dimensions: number, currentKb: number): number {
  const bytesPerRow = 4 * dimensions + 8 + 32 * hnswOptions.m + 256;
  const neededKb = Math.ceil((rows * bytesPerRow * 1.25) / 1024);
  return Math.max(currentKb, Math.min(hnswBuildMemoryCapKb, neededKb));
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
