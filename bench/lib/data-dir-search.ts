/**
 * The search service over a data dir bench:quality filled, built as the service builds it
 * (settings' embedders, word-vector expansion, built-in translators): the dev-split benches
 * (rerank-weights, semantic-vectors) replay its rankings.
 */
import { openDatabase } from '../../src/db/database.js';
import { createEmbeddersFromSettings } from '../../src/embedding/embedders.js';
import { loadSharedWordVectors } from '../../src/embedding/word-vectors.js';
import type { KeywordMemoryIndex } from '../../src/search/keyword-memory-index.js';
import { createLsaIndex, type LsaIndex } from '../../src/search/lsa-index.js';
import { createQueryExpander, type ExpansionOptions } from '../../src/search/query-expansion.js';
import { builtInTranslators } from '../../src/search/query-translation.js';
import { createSearchService } from '../../src/search/search-service.js';
import { loadSettings } from '../../src/settings.js';

export async function openDataDirSearch(dataDir: string) {
  const database = await openDatabase({ dataDir });
  return { database, ...dataDirSearch(database, dataDir) };
}

/**
 * The search service over an open data dir; `lsa`: with the corpus LSA, as WEIR_SEARCH_LSA=on
 * gives it (its vectors built on the first RRF search, or on `lsa.ready()`); `expansion`: the
 * word-vector expansion's options instead of its defaults.
 */
export function dataDirSearch(
  database: Awaited<ReturnType<typeof openDatabase>>,
  dataDir: string,
  options: {
    lsa?: boolean;
    /** A third RRF list of the bench's own in place of the corpus LSA (bench:doc-expansion). */
    thirdList?: LsaIndex;
    keywordIndex?: KeywordMemoryIndex;
    expansion?: Partial<ExpansionOptions>;
  } = {},
) {
  const settings = loadSettings({ WEIR_DATA_DIR: dataDir });
  const lsa = options.thirdList ?? (options.lsa ? createLsaIndex(database.db, undefined) : undefined);
  const search = createSearchService({
    db: database.db,
    embedders: createEmbeddersFromSettings(settings.embedding_models),
    expander: createQueryExpander({
      db: database.db,
      vectors: () => loadSharedWordVectors(),
      options: options.expansion,
    }),
    translators: builtInTranslators(database.db),
    keywordIndex: options.keywordIndex,
    // The embedded service ranks every vector exactly (from memory, segment-memory.ts; the same
    // ranking as the statement scoring every vector), not through HNSW.
    exactVectorLimit: Number.POSITIVE_INFINITY,
    lsa,
  });
  return { search, lsa };
}

/** Every indexed segment with its page's title, in segment id order, and a look-up by id. */
export async function loadIndexedSegments(database: Awaited<ReturnType<typeof openDatabase>>) {
  const segments = await database.db
    .selectFrom('knowledge_segments as s')
    .innerJoin('knowledge_documents as d', 'd.document_id', 's.document_id')
    .select([
      's.segment_id',
      's.document_id',
      's.text',
      's.heading_path',
      's.segment_index',
      's.language',
      'd.title',
      'd.url',
      'd.source_key',
      'd.storage_key',
    ])
    .orderBy('s.segment_id')
    .execute();
  const indexOf = new Map(segments.map((segment, index) => [segment.segment_id, index]));
  return { segments, indexOf };
}

export type IndexedSegment = Awaited<ReturnType<typeof loadIndexedSegments>>['segments'][number];

/** A segment's heading path, whether the driver gave it as JSON text or as an array. */
export function headingsOf(segment: IndexedSegment): string[] {
  const path =
    typeof segment.heading_path === 'string' ? JSON.parse(segment.heading_path) : segment.heading_path;
  return Array.isArray(path) ? path : [];
}

/**
 * The rerank's candidates for a fused list, as the search service builds them: each segment's
 * page, fused score, raw keyword score (when the keyword list held it), text and headings.
 */
export function rerankCandidatesOf(
  fused: ReadonlyArray<{ id: string; score: number }>,
  keyword: ReadonlyArray<{ id: string; raw: number }>,
  indexed: Awaited<ReturnType<typeof loadIndexedSegments>>,
) {
  const keywordRaw = new Map(keyword.map((entry) => [entry.id, entry.raw]));
  return fused.map((entry) => {
    const segment = indexed.segments[indexed.indexOf.get(entry.id) as number] as IndexedSegment;
    return {
      segment_id: entry.id,
      document_id: segment.document_id,
      score: entry.score,
      keyword_raw: keywordRaw.get(entry.id) ?? null,
      text: segment.text,
      title: segment.title,
      heading_path: headingsOf(segment),
      segment_index: segment.segment_index,
    };
  });
}

/**
 * Weighted reciprocal-rank fusion of id lists, as the service's RRF fuses its lists (k 60 by
 * default), ties to the lower id; the first `limit`. The benches that replay the service's
 * fusion with an extra list share it.
 */
export function fuseRanked(
  lists: readonly { ids: readonly string[]; weight: number }[],
  k = 60,
  limit = 50,
): { id: string; score: number }[] {
  const score = new Map<string, number>();
  for (const { ids, weight } of lists)
    ids.forEach((id, rank) => {
      score.set(id, (score.get(id) ?? 0) + weight / (k + rank + 1));
    });
  return [...score]
    .map(([id, value]) => ({ id, score: value }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
    .slice(0, limit);
}

/** Each segment's position on its page (`segment_index`), for the segments of one answer. */
export async function segmentPositions(
  database: Awaited<ReturnType<typeof openDatabase>>,
  segmentIds: readonly string[],
): Promise<Map<string, number>> {
  if (segmentIds.length === 0) return new Map();
  const rows = await database.db
    .selectFrom('knowledge_segments')
    .select(['segment_id', 'segment_index'])
    .where('segment_id', 'in', [...segmentIds])
    .execute();
  return new Map(rows.map((row) => [row.segment_id, row.segment_index]));
}
