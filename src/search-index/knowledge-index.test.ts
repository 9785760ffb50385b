import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { itWhere } from '../../test/helpers/applies.js';
import { databaseTargets, vectorDatabaseTargets } from '../../test/helpers/databases.js';
import type { Database } from '../db/database.js';
import { hashEmbedding } from '../embedding/hash-embedder.js';
import { createKnowledgeIndex, hnswOptions, type KnowledgeIndex } from './knowledge-index.js';
import { hnswBuildMemoryCapKb, hnswBuildMemoryKb } from './knowledge-vectors.js';

describe.each(databaseTargets())('knowledge index on $name', (target) => {
  let database: Database;
  let index: KnowledgeIndex;

  beforeAll(async () => {
    database = await target.open();
    index = createKnowledgeIndex(database.db);
  });
  afterAll(() => database.close());

  it('updates a re-ingested document instead of duplicating it, and drops segments past the new end', async () => {
    const document = {
      sourceKey: 'http://127.0.0.1/page',
      url: 'http://127.0.0.1/page',
      title: 'Page',
      language: 'english' as const,
      executionId: 'e1',
    };
    const documentId = await index.upsertDocument(document);
    const segments = [0, 1, 2].map((segmentIndex) => ({
      segmentIndex,
      text: `running segment ${segmentIndex}`,
      tokenCount: 3,
      headingPath: ['Guide', 'Part'],
    }));
    const firstIds = await index.upsertSegments(documentId, segments, { executionId: 'e1', total: 3 });

    expect(await index.upsertDocument({ ...document, executionId: 'e2' })).toBe(documentId);
    const secondIds = await index.upsertSegments(documentId, segments.slice(0, 2), {
      executionId: 'e2',
      total: 2,
    });
    expect(secondIds).toEqual(firstIds.slice(0, 2));

    const documents = await database.db.selectFrom('knowledge_documents').selectAll().execute();
    expect(documents).toHaveLength(1);
    expect(documents[0]?.execution_id).toBe('e2');
    const rows = await database.db
      .selectFrom('knowledge_segments')
      .select(['segment_index', 'execution_id'])
      .orderBy('segment_index')
      .execute();
    expect(rows).toEqual([
      { segment_index: 0, execution_id: 'e2' },
      { segment_index: 1, execution_id: 'e2' },
    ]);
  });

  it('trims a stored tail and one the batch wrote itself, and keeps what an earlier batch of the page wrote', async () => {
    const document = {
      sourceKey: 'http://127.0.0.1/tail',
      url: 'http://127.0.0.1/tail',
      title: 'Tail',
      language: 'english' as const,
      executionId: 't1',
    };
    const segment = (segmentIndex: number) => ({
      segmentIndex,
      text: `tail text ${segmentIndex}`,
      tokenCount: 3,
      headingPath: ['T'],
    });
    const stored = async (url: string) =>
      (
        await sql<{ segment_index: number }>`select s.segment_index from knowledge_segments s
          join knowledge_documents d using (document_id) where d.url = ${url} order by 1`.execute(database.db)
      ).rows.map((row) => row.segment_index);
    // A page of four segments written over two batches: the second must not drop the first's.
    await index.indexDocuments([{ document, segments: [segment(0), segment(1)], total: 4 }]);
    await index.indexDocuments([{ document, segments: [segment(2), segment(3)], total: 4 }]);
    expect(await stored(document.url)).toEqual([0, 1, 2, 3]);
    // A shorter version (total 2): the stored tail goes.
    await index.indexDocuments([{ document, segments: [segment(0)], total: 2 }]);
    expect(await stored(document.url)).toEqual([0, 1]);
    // A new page's shorter version in one batch with a message of a longer one (segment 3):
    // nothing was stored past the end, but this batch put one there, and it goes too.
    const fresh = { ...document, sourceKey: 'http://127.0.0.1/tail2', url: 'http://127.0.0.1/tail2' };
    await index.indexDocuments([{ document: fresh, segments: [segment(0), segment(3)], total: 2 }]);
    expect(await stored(fresh.url)).toEqual([0]);
    const totals = await sql<{ segments: number }>`select segments::int from knowledge_segment_totals
      where language = 'english'`.execute(database.db);
    const counted = await sql<{ segments: number }>`select count(*)::int as segments from knowledge_segments
      where language = 'english'`.execute(database.db);
    expect(totals.rows[0]?.segments).toBe(counted.rows[0]?.segments);
  });

  it('indexes a batch of documents in one call: repeated segments written once, each tail trimmed', async () => {
    const documents = ['http://127.0.0.1/a', 'http://127.0.0.1/b'].map((url) => ({
      sourceKey: url,
      url,
      title: url.slice(-1),
      language: 'english' as const,
      executionId: 'b1',
    }));
    const segment = (segmentIndex: number, text = `text ${segmentIndex}`) => ({
      segmentIndex,
      text,
      tokenCount: 2,
      headingPath: ['H'],
    });
    const first = await index.indexDocuments([
      {
        document: documents[0] as (typeof documents)[0],
        segments: [0, 1, 2].map((at) => segment(at)),
        total: 3,
      },
      { document: documents[1] as (typeof documents)[0], segments: [segment(0)], total: 1 },
    ]);
    expect(first.map((ids) => ids.length)).toEqual([3, 1]);
    const again = await index.indexDocuments([
      {
        document: { ...(documents[0] as (typeof documents)[0]), executionId: 'b2' },
        // Segment 1 twice (a message delivered twice into one batch): the last copy wins.
        segments: [segment(0), segment(1, 'old'), segment(1, 'new runners')],
        total: 2,
      },
    ]);
    expect(again[0]).toEqual([first[0]?.[0], first[0]?.[1], first[0]?.[1]]);
    const rows = await database.db
      .selectFrom('knowledge_segments')
      .innerJoin('knowledge_documents', 'knowledge_documents.document_id', 'knowledge_segments.document_id')
      .select(['knowledge_documents.url', 'segment_index', 'text', 'knowledge_segments.execution_id'])
      .where(
        'knowledge_documents.url',
        'in',
        documents.map((document) => document.url),
      )
      .orderBy('knowledge_documents.url')
      .orderBy('segment_index')
      .execute();
    expect(rows).toEqual([
      { url: 'http://127.0.0.1/a', segment_index: 0, text: 'text 0', execution_id: 'b2' },
      { url: 'http://127.0.0.1/a', segment_index: 1, text: 'new runners', execution_id: 'b2' },
      { url: 'http://127.0.0.1/b', segment_index: 0, text: 'text 0', execution_id: 'b1' },
    ]);
    const stemmed = await sql<{ count: number }>`select count(*)::int as count from knowledge_segments
      where search_vector @@ websearch_to_tsquery('english', 'runner') and text = 'new runners'`.execute(
      database.db,
    );
    expect(stemmed.rows[0]?.count).toBe(1);
  });

  it('stems segments in their language', async () => {
    const documentId = await index.upsertDocument({
      sourceKey: 'http://127.0.0.1/no',
      language: 'norwegian',
      executionId: 'e3',
    });
    await index.upsertSegments(
      documentId,
      [{ segmentIndex: 0, text: 'Bilene kjørte hjem', tokenCount: 3, headingPath: [] }],
      { executionId: 'e3' },
    );
    const hit = await sql<{ count: number }>`select count(*)::int as count from knowledge_segments
      where search_vector @@ websearch_to_tsquery('norwegian', 'bil')`.execute(database.db);
    expect(hit.rows[0]?.count).toBe(1);
  });

  it('stores vectors per model and refuses a changed dimension count', async () => {
    const documentId = await index.upsertDocument({ sourceKey: 'k', language: 'simple', executionId: 'e4' });
    const [segmentId] = await index.upsertSegments(
      documentId,
      [{ segmentIndex: 0, text: 'x', tokenCount: 1, headingPath: [] }],
      { executionId: 'e4' },
    );
    await index.upsertEmbeddings([
      { segmentId: segmentId as string, model: 'm', vector: [0.6, 0.8], executionId: 'e4' },
    ]);
    await index.upsertEmbeddings([
      { segmentId: segmentId as string, model: 'm', vector: [0.8, 0.6], executionId: 'e4' },
    ]);
    const stored = await database.db.selectFrom('knowledge_embeddings').selectAll().execute();
    expect(stored).toHaveLength(1);
    expect(stored[0]?.embedding[0]).toBeCloseTo(0.8, 5);
    await expect(
      index.upsertEmbeddings([
        { segmentId: segmentId as string, model: 'm', vector: [1, 0, 0], executionId: 'e4' },
      ]),
    ).rejects.toThrow(/2 dimensions/);
    // The HNSW index waits for buildVectorIndexes (the engine calls it when an execution ends).
    const before = await database.db.selectFrom('knowledge_models').selectAll().executeTakeFirstOrThrow();
    expect(before.vector_index).toBeNull();
    expect(await index.buildVectorIndexes()).toEqual((await index.vectorSupport()) ? ['m'] : []);
    expect(await index.buildVectorIndexes()).toEqual([]); // nothing pending any more
    const model = await database.db.selectFrom('knowledge_models').selectAll().executeTakeFirstOrThrow();
    expect(model.vector_index !== null).toBe(await index.vectorSupport());
    if (target.name === 'pglite') expect(await index.vectorSupport()).toBe(true);
  });
});

// Its own database: the other tests count every row of their tables.
describe.each(await vectorDatabaseTargets())('knowledge index vectors on $name', (target) => {
  let database: Database;
  let index: KnowledgeIndex;

  beforeAll(async () => {
    database = await target.open();
    index = createKnowledgeIndex(database.db);
  });
  afterAll(() => database.close());

  it('says whether it has vector support, as the database does', async () => {
    expect(await index.vectorSupport()).toBe(target.vectors);
  });

  itWhere(target.vectors)('builds a model index whose top 10 mostly agree with an exact scan', async () => {
    const paragraphs: string[] = [];
    for (const file of (await readdir('docs')).filter((name) => name.endsWith('.md')).sort()) {
      const text = await readFile(path.join('docs', file), 'utf8');
      paragraphs.push(...text.split(/\n\s*\n/).filter((paragraph) => paragraph.length > 80));
    }
    const sample = paragraphs.slice(0, 600);
    const documentId = await index.upsertDocument({
      sourceKey: 'docs',
      language: 'english',
      executionId: 'r',
    });
    const ids = await index.upsertSegments(
      documentId,
      sample.map((text, segmentIndex) => ({ segmentIndex, text, tokenCount: 1, headingPath: [] })),
      { executionId: 'r', language: 'english' },
    );
    await index.upsertEmbeddings(
      ids.map((segmentId, position) => ({
        segmentId,
        model: 'recall',
        vector: hashEmbedding(sample[position] as string, 384),
        executionId: 'r',
      })),
    );
    // 600 graph elements need about 1.3 MB: the build raises maintenance_work_mem for itself
    // only, and the session keeps its own setting.
    await sql`set maintenance_work_mem = '1MB'`.execute(database.db);
    await index.buildVectorIndexes();
    const setting = await sql<{ maintenance_work_mem: string }>`show maintenance_work_mem`.execute(
      database.db,
    );
    expect(setting.rows[0]?.maintenance_work_mem).toBe('1MB');
    await sql`reset maintenance_work_mem`.execute(database.db);
    const model = await database.db
      .selectFrom('knowledge_models')
      .select('vector_index')
      .where('model', '=', 'recall')
      .executeTakeFirstOrThrow();
    const definition = await sql<{ indexdef: string }>`select indexdef from pg_indexes
      where indexname = ${model.vector_index}`.execute(database.db);
    expect(definition.rows[0]?.indexdef).toContain(`m='${hnswOptions.m}'`);
    const nearest = (vector: string, exact: boolean) =>
      database.db.transaction().execute(async (transaction) => {
        await sql`select set_config('hnsw.ef_search', '50', true), set_config('enable_indexscan', ${exact ? 'off' : 'on'}, true)`.execute(
          transaction,
        );
        const rows = await sql<{ segment_id: string }>`select segment_id from knowledge_embeddings
          where model = 'recall' order by embedding::vector(384) <=> ${vector}::vector(384) limit 10`.execute(
          transaction,
        );
        return rows.rows.map((row) => row.segment_id);
      });
    let agreed = 0;
    const queries = sample.filter((_, position) => position % 20 === 3);
    for (const query of queries) {
      const words = query.split(/\s+/).slice(2, 8).join(' ');
      const vector = `[${Array.from(hashEmbedding(words, 384)).join(',')}]`;
      const exact = await nearest(vector, true);
      agreed += (await nearest(vector, false)).filter((id) => exact.includes(id)).length;
    }
    expect(agreed / (queries.length * 10)).toBeGreaterThan(0.85);
  });
});

describe('HNSW build memory', () => {
  it('sizes maintenance_work_mem to the graph, never below the setting, at most the cap', () => {
    // 33,423 rows of 384 dimensions outgrew 64 MB in pgvector's build (2,008 bytes a row).
    const measuredKb = (33_423 * 2_008) / 1024;
    expect(hnswBuildMemoryKb(33_423, 384, 65_536)).toBeGreaterThan(measuredKb);
    expect(hnswBuildMemoryKb(100_000, 384, 65_536)).toBeGreaterThan((100_000 * 2_008) / 1024);
    // Twice the rows or dimensions need more; a small model keeps the session's setting.
    expect(hnswBuildMemoryKb(200_000, 384, 0)).toBeGreaterThan(hnswBuildMemoryKb(100_000, 384, 0));
    expect(hnswBuildMemoryKb(100_000, 768, 0)).toBeGreaterThan(hnswBuildMemoryKb(100_000, 384, 0));
    expect(hnswBuildMemoryKb(1_000, 384, 65_536)).toBe(65_536);
    expect(hnswBuildMemoryKb(10_000_000, 384, 65_536)).toBe(hnswBuildMemoryCapKb);
    expect(hnswBuildMemoryKb(10_000_000, 384, 4 * hnswBuildMemoryCapKb)).toBe(4 * hnswBuildMemoryCapKb);
  });
});
