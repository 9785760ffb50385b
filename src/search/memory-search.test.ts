import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nearTieText, seededRandom } from '../../test/helpers/near-tie-corpus.js';
import { type Database, openDatabase } from '../db/database.js';
import { createEmbedderCatalog } from '../embedding/embedder.js';
import { createHashEmbedder, hashEmbedding } from '../embedding/hash-embedder.js';
import { createKnowledgeIndex, type KnowledgeIndex } from '../search-index/knowledge-index.js';
import { createKeywordMemoryIndex, type KeywordMemoryIndex } from './keyword-memory-index.js';
import { createSearchService, type SearchResponse, type SearchService } from './search-service.js';
import { ModelVectors } from './vector-memory.js';

const embedder = createHashEmbedder();

/** `documents` pages of 10 segments of 30 words from a 40-word vocabulary: many near ties. */
function pages(first: number, documents: number, executionId: string, next: () => number) {
  return Array.from({ length: documents }, (_, offset) => {
    const url = `http://127.0.0.1/doc/${first + offset}`;
    return {
      document: {
        sourceKey: url,
        url,
        title: `Doc ${first + offset}`,
        language: 'english' as const,
        executionId,
      },
      segments: Array.from({ length: 10 }, (_, segmentIndex) => ({
        segmentIndex,
        text: nearTieText(next),
        tokenCount: 30,
        headingPath: ['Doc', `Part ${segmentIndex}`],
      })),
    };
  });
}

/** Indexes the pages and their hash embeddings through the knowledge index's write paths. */
async function write(knowledge: KnowledgeIndex, entries: ReturnType<typeof pages>) {
  const ids = (await knowledge.indexDocuments(entries)).flat();
  const texts = entries.flatMap((entry) => entry.segments.map((segment) => segment.text));
  const vectors = await embedder.embed(texts);
  await knowledge.upsertEmbeddings(
    ids.map((segmentId, position) => ({
      segmentId,
      model: 'hash',
      vector: vectors[position] as Float32Array,
      executionId: entries[Math.floor(position / 10)]?.document.executionId as string,
    })),
  );
}

const queries = [
  'vacuum index table',
  'replication standby primary recovery',
  'hash join sort merge',
  'role',
];

/** What must be equal between the paths: the ranking and every figure and row field shown with it. */
function shown(response: SearchResponse) {
  return response.results.map(({ segment_id, rank, score, components, text, source }) => ({
    segment_id,
    rank,
    score,
    components,
    text,
    source,
  }));
}

describe('search from memory (vectors and rows beside the keyword index, PGlite)', () => {
  let dataDir: string;
  let database: Database;
  let knowledge: KnowledgeIndex;
  let memoryIndex: KeywordMemoryIndex;
  let memory: SearchService;
  let exact: SearchService;
  const next = seededRandom(35);

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'weir-memory-search-'));
    database = await openDatabase({ dataDir, pgliteThread: 'main' });
    knowledge = createKnowledgeIndex(database.db);
    await write(knowledge, pages(0, 30, 'e1', next));
    await write(knowledge, pages(30, 20, 'e2', next));
    await knowledge.buildVectorIndexes();
    const embedders = createEmbedderCatalog([createHashEmbedder()]);
    memoryIndex = createKeywordMemoryIndex(database.db);
    memory = createSearchService({ db: database.db, embedders, keywordIndex: memoryIndex });
    // The SQL statement alone, every vector scored: the ranking memory must give.
    exact = createSearchService({ db: database.db, embedders, exactVectorLimit: Number.POSITIVE_INFINITY });
    await memoryIndex.ready();
  }, 120_000);
  afterAll(async () => {
    await database?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const expectSameAnswers = async (requests: { query: string; sources?: string[] }[]) => {
    for (const request of requests)
      for (const type of ['vector', 'rrf', 'keyword'] as const) {
        const fromMemory = await memory.search(type, { ...request, limit: 20 });
        expect(fromMemory.parameters.rows, `${type} ${request.query}`).toBe('memory');
        if (type !== 'keyword') expect(fromMemory.parameters.vector_ranking).toBe('memory');
        const bySql = await exact.search(type, { ...request, limit: 20 });
        expect(shown(fromMemory), `${type} ${request.query}`).toEqual(shown(bySql));
        expect(fromMemory.total).toBe(bySql.total);
        expect(fromMemory.results.length).toBeGreaterThan(0);
      }
  };

  it('gives the answers of the exact SQL scan, vector distances to the last bit, with no search statement', async () => {
    await expectSameAnswers(queries.map((query) => ({ query })));
    await expectSameAnswers(queries.map((query) => ({ query, sources: ['e2'] })));
  }, 120_000);

  it('follows re-indexed pages, new embeddings and deleted pages written after the fill', async () => {
    await write(knowledge, pages(10, 5, 'e1', next));
    await write(knowledge, pages(50, 5, 'e2', next));
    const first = await database.db.selectFrom('knowledge_segments').select('segment_id').limit(3).execute();
    // Embeddings re-written alone (a re-embedding with another text's vector).
    const [other] = await embedder.embed(['checkpoint archive buffer memory']);
    await knowledge.upsertEmbeddings(
      first.map((row) => ({
        segmentId: row.segment_id,
        model: 'hash',
        vector: other as Float32Array,
        executionId: 'e1',
      })),
    );
    await knowledge.removeDocuments(['http://127.0.0.1/doc/3', 'http://127.0.0.1/doc/40']);
    await expectSameAnswers([...queries, 'checkpoint archive buffer memory'].map((query) => ({ query })));
  }, 120_000);

  it('lets the statement rank vectors, and fills anew, when the database holds vectors memory never heard of', async () => {
    const [row] = await database.db.selectFrom('knowledge_segments').select('segment_id').limit(1).execute();
    await sql`delete from knowledge_embeddings where segment_id = ${row?.segment_id}::uuid`.execute(
      database.db,
    );
    // The model resolver caches the count briefly: a fresh service reads the database's.
    const fresh = createSearchService({
      db: database.db,
      embedders: createEmbedderCatalog([createHashEmbedder()]),
      keywordIndex: memoryIndex,
    });
    const response = await fresh.search('rrf', { query: 'vacuum index table', limit: 10 });
    expect(response.parameters.vector_ranking).not.toBe('memory');
    expect(response.parameters.rows).toBe('sql');
    await memoryIndex.ready();
    const refilled = await fresh.search('rrf', { query: 'vacuum index table', limit: 10 });
    expect(refilled.parameters.rows).toBe('memory');
    const bySql = await exact.search('rrf', { query: 'vacuum index table', limit: 10 });
    expect(shown(refilled)).toEqual(shown(bySql));
  }, 60_000);
});

describe('ModelVectors', () => {
  it('ranks by cosine distance, ties by segment id, and skips what the filter refuses', () => {
    const vectors = new ModelVectors(3);
    vectors.set('b', 'e1', [1, 0, 0]);
    vectors.set('a', 'e1', [2, 0, 0]);
    vectors.set('c', 'e2', [0, 1, 0]);
    vectors.set('d', 'e2', [1, 1, 0]);
    const query = Float32Array.from([1, 0, 0]);
    expect(vectors.nearest(query, 3).map((hit) => hit.segmentId)).toEqual(['a', 'b', 'd']);
    expect(
      vectors.nearest(query, 10, (_, execution) => execution === 'e2').map((hit) => hit.segmentId),
    ).toEqual(['d', 'c']);
    vectors.remove('a');
    vectors.set('d', 'e2', [0, 0, 1]);
    expect(vectors.nearest(query, 10).map((hit) => [hit.segmentId, hit.distance])).toEqual([
      ['b', 0],
      ['c', 1],
      ['d', 1],
    ]);
    expect(vectors.size).toBe(3);
  });

  it('gives the same distances with WebAssembly SIMD as with the scalar loop, through growth and compaction', () => {
    const simd = new ModelVectors(384);
    const scalar = new ModelVectors(384, false);
    const next = seededRandom(36);
    for (let index = 0; index < 3001; index++) {
      const text = nearTieText(next);
      const vector = Array.from(hashEmbedding(text, 384));
      simd.set(`s${index}`, 'e', vector);
      scalar.set(`s${index}`, 'e', vector);
    }
    for (let index = 0; index < 2000; index += 1) {
      simd.remove(`s${index}`);
      scalar.remove(`s${index}`);
    }
    for (const query of [...queries, 'checkpoint archive buffer memory']) {
      const vector = hashEmbedding(query, 384);
      const fromSimd = simd.nearest(vector, 2000);
      expect(fromSimd.length).toBe(1001);
      expect(fromSimd).toEqual(scalar.nearest(vector, 2000));
    }
  });

  it('keeps every vector through growth and compaction', () => {
    const vectors = new ModelVectors(2);
    for (let index = 0; index < 3000; index++)
      vectors.set(`s${String(index).padStart(4, '0')}`, 'e', [1, index]);
    for (let index = 0; index < 2500; index++) vectors.remove(`s${String(index).padStart(4, '0')}`);
    expect(vectors.size).toBe(500);
    const nearest = vectors.nearest(Float32Array.from([0, 1]), 2);
    expect(nearest.map((hit) => hit.segmentId)).toEqual(['s2999', 's2998']);
  });
});
