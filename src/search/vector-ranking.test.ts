import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { vectorDatabaseTargets } from '../../test/helpers/databases.js';
import { nearTieText, seededRandom } from '../../test/helpers/near-tie-corpus.js';
import type { Database } from '../db/database.js';
import { createEmbedderCatalog } from '../embedding/embedder.js';
import { createHashEmbedder } from '../embedding/hash-embedder.js';
import { createKnowledgeIndex } from '../search-index/knowledge-index.js';
import { createSearchService, type SearchService } from './search-service.js';

/**
 * 1,000 segments (the exact ranking's limit) of 30 words each from a 40-word vocabulary: many near neighbours for every
 * query, which is where an HNSW graph's approximate order departs from the exact one (at
 * ef_search 100 and 50 candidates, with HNSW ranking (exactVectorLimit 0), both targets failed).
 */
async function seedCorpus(database: Database) {
  const next = seededRandom(34);
  const index = createKnowledgeIndex(database.db);
  const embedder = createHashEmbedder();
  for (let first = 0; first < 100; first += 50) {
    const entries = Array.from({ length: 50 }, (_, offset) => {
      const url = `http://127.0.0.1/doc/${first + offset}`;
      return {
        document: {
          sourceKey: url,
          url,
          title: `Doc ${first + offset}`,
          language: 'english' as const,
          executionId: 'e1',
        },
        segments: Array.from({ length: 10 }, (_, segmentIndex) => ({
          segmentIndex,
          text: nearTieText(next),
          tokenCount: 30,
          headingPath: ['Doc'],
        })),
      };
    });
    const ids = (await index.indexDocuments(entries)).flat();
    const vectors = await embedder.embed(
      entries.flatMap((entry) => entry.segments.map((segment) => segment.text)),
    );
    await index.upsertEmbeddings(
      ids.map((segmentId, position) => ({
        segmentId,
        model: 'hash',
        vector: vectors[position] as Float32Array,
        executionId: 'e1',
      })),
    );
  }
  return index;
}

const queries = [
  'vacuum index table',
  'replication standby primary recovery',
  'hash join sort merge',
  'role schema',
];

// Only targets with pgvector rank by vectors (a server without it answers 503, tested in
// test/search-api.test.ts); the node-postgres path is covered by pglite-wire.
describe.each(
  (await vectorDatabaseTargets()).filter((target) => target.vectors),
)('vector ranking on $name', (target) => {
  let database: Database;
  let search: SearchService;
  let index: Awaited<ReturnType<typeof seedCorpus>>;
  beforeAll(async () => {
    database = await target.open();
    if (!target.vectors) return;
    index = await seedCorpus(database);
    search = createSearchService({
      db: database.db,
      embedders: createEmbedderCatalog([createHashEmbedder()]),
    });
  }, 120_000);
  afterAll(() => database?.close());

  const rankings = async () => {
    const ranked: Record<string, string[]> = {};
    for (const query of queries)
      for (const type of ['vector', 'rrf'] as const) {
        const response = await search.search(type, { query, limit: 50 });
        ranked[`${type} ${query}`] = response.results.map((result) => result.segment_id);
        expect(response.parameters.vector_ranking).toBe('exact');
      }
    return ranked;
  };

  it('the same query gives the same vector and RRF ranking before and after the HNSW index is built', async () => {
    const before = await rankings();
    expect(await index.buildVectorIndexes()).toEqual(['hash']);
    const indexes = await sql<{ indexname: string }>`select indexname from pg_indexes
        where tablename = 'knowledge_embeddings' and indexdef like '%hnsw%'`.execute(database.db);
    expect(indexes.rows.length).toBe(1);
    const after = await rankings();
    expect(after).toEqual(before);
    expect(Object.values(before).every((ranking) => ranking.length === 50)).toBe(true);
  }, 120_000);
});
