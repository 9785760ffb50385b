/**
 * What the embedded search statement read from the database besides the keyword ranking
 * (issue 35): each segment's text and attribution (the rows a search returns) and its vectors
 * per model (vector-memory.ts), held beside the in-memory keyword postings and kept current by
 * the same fill and re-reads (keyword-memory-index.ts). With them an RRF search on PGlite needs
 * no search statement at all: fuseInMemory gives the rows the statement would.
 */
import type { KeywordHit } from './keyword-postings.js';
import { textWords, WordVocabulary } from './rerank.js';
import type { SearchRow, SegmentRowFields } from './search-sql.js';
import { ModelVectors, type VectorHit } from './vector-memory.js';

export type { SegmentRowFields };

export interface SegmentVector {
  segmentId: string;
  model: string;
  executionId: string;
  vector: ArrayLike<number>;
}

export class SegmentMemory {
  private readonly rows = new Map<string, SegmentRowFields>();
  private readonly byDocument = new Map<string, Set<string>>();
  /** Documents by address (URL, else source key), as addressedSegmentsSql finds them. */
  private readonly byAddress = new Map<string, Set<string>>();
  private readonly addressOf = new Map<string, string>();
  /** Documents by stored page identity (`page_key` and `page_language`, joined by pageEntry). */
  private readonly byPage = new Map<string, Set<string>>();
  private readonly pageOf = new Map<string, string>();
  private readonly models = new Map<string, ModelVectors>();
  /** One copy of each word of the rows' texts, with its rerank key. */
  private readonly vocabulary = new WordVocabulary();

  setRow(row: SegmentRowFields): void {
    row.text_words ??= textWords(row.text, this.vocabulary);
    const previous = this.rows.get(row.segment_id);
    if (previous && previous.document_id !== row.document_id)
      this.byDocument.get(previous.document_id)?.delete(row.segment_id);
    this.rows.set(row.segment_id, row);
    const segments = this.byDocument.get(row.document_id) ?? new Set<string>();
    segments.add(row.segment_id);
    this.byDocument.set(row.document_id, segments);
    this.index(this.byAddress, this.addressOf, row.document_id, row.url ?? row.source_key);
    const page = row.page_key && row.page_language ? pageEntry(row.page_key, row.page_language) : undefined;
    this.index(this.byPage, this.pageOf, row.document_id, page);
  }

  /** Files a document under `key` (none: under nothing), out of the key it was under. */
  private index(
    index: Map<string, Set<string>>,
    keyOf: Map<string, string>,
    documentId: string,
    key: string | undefined,
  ): void {
    const previous = keyOf.get(documentId);
    if (previous === key) return;
    removeFrom(index, previous, documentId);
    if (key === undefined) {
      keyOf.delete(documentId);
      return;
    }
    keyOf.set(documentId, key);
    const documents = index.get(key) ?? new Set<string>();
    documents.add(documentId);
    index.set(key, documents);
  }

  /**
   * The rows, within the filters, of the documents at these addresses (URL, else source key)
   * and of those `pages` names (page key and language), by document and segment index: what
   * addressedSegmentsSql selects.
   */
  addressed(
    addresses: readonly string[],
    filters: { executionIds: readonly string[] | null; language: string | undefined },
    pages?: { keys: readonly string[]; language: string },
  ): SegmentRowFields[] {
    const executions = filters.executionIds ? new Set(filters.executionIds) : undefined;
    const documents = new Set<string>();
    for (const address of new Set(addresses))
      for (const documentId of this.byAddress.get(address) ?? [])
        if (this.addressOf.get(documentId) === address) documents.add(documentId);
    for (const key of pages?.keys ?? []) {
      const page = pageEntry(key, pages?.language ?? '');
      for (const documentId of this.byPage.get(page) ?? [])
        if (this.pageOf.get(documentId) === page) documents.add(documentId);
    }
    const rows: SegmentRowFields[] = [];
    for (const documentId of documents) {
      for (const segmentId of this.byDocument.get(documentId) ?? []) {
        const row = this.rows.get(segmentId);
        if (!row) continue;
        if (executions && !executions.has(row.execution_id)) continue;
        if (filters.language && row.language !== filters.language) continue;
        rows.push(row);
      }
    }
    return rows.sort((left, right) =>
      left.document_id !== right.document_id
        ? left.document_id < right.document_id
          ? -1
          : 1
        : left.segment_index - right.segment_index,
    );
  }

  row(segmentId: string): SegmentRowFields | undefined {
    return this.rows.get(segmentId);
  }

  setVector(entry: SegmentVector): void {
    let vectors = this.models.get(entry.model);
    if (vectors && vectors.dimensions !== entry.vector.length) {
      // The model was re-indexed with another dimension count: its old vectors are gone.
      this.models.delete(entry.model);
      vectors = undefined;
    }
    if (!vectors) {
      vectors = new ModelVectors(entry.vector.length);
      this.models.set(entry.model, vectors);
    }
    vectors.set(entry.segmentId, entry.executionId, entry.vector);
  }

  /** Forgets every segment of these documents: rows and vectors of every model. */
  removeDocuments(documentIds: readonly string[]): void {
    for (const documentId of documentIds) {
      for (const segmentId of this.byDocument.get(documentId) ?? []) {
        this.rows.delete(segmentId);
        this.removeVectors(segmentId);
      }
      this.byDocument.delete(documentId);
      removeFrom(this.byAddress, this.addressOf.get(documentId), documentId);
      this.addressOf.delete(documentId);
      removeFrom(this.byPage, this.pageOf.get(documentId), documentId);
      this.pageOf.delete(documentId);
    }
  }

  /** Forgets a segment's vectors only (their rows are re-read with them). */
  removeVectors(segmentId: string): void {
    for (const vectors of this.models.values()) vectors.remove(segmentId);
  }

  /** Vectors held for a model (0 when none). */
  vectorCount(model: string): number {
    return this.models.get(model)?.size ?? 0;
  }

  /** The exact vector ranking, or undefined when the model's vectors are not held. */
  nearest(
    model: string,
    query: Float32Array,
    depth: number,
    filters: { executionIds: readonly string[] | null; language: string | undefined },
  ): VectorHit[] | undefined {
    const vectors = this.models.get(model);
    if (!vectors || vectors.dimensions !== query.length) return undefined;
    const executions = filters.executionIds ? new Set(filters.executionIds) : undefined;
    const { language } = filters;
    const accepts =
      executions || language
        ? (segmentId: string, executionId: string) =>
            (!executions || executions.has(executionId)) &&
            (!language || this.rows.get(segmentId)?.language === language)
        : undefined;
    return vectors.nearest(query, depth, accepts);
  }

  get size(): { rows: number; vectors: number } {
    let vectors = 0;
    for (const model of this.models.values()) vectors += model.size;
    return { rows: this.rows.size, vectors };
  }
}

export interface FusionOptions {
  keyword?: { hits: readonly KeywordHit[]; weight: number } | undefined;
  vector?: { hits: readonly VectorHit[]; weight: number } | undefined;
  k: number;
  limit: number;
  scoring: 'rrf' | 'keyword' | 'vector';
}

/**
 * search-sql.ts's statement, given both rankings: ranks by position, the full outer join, the
 * score (the same float8 operations: weight / (k + rank) summed keyword first), the order
 * (score descending, then segment id), the candidate count before the limit, and the rows.
 * Undefined when a row is not held (the caller asks the database).
 */
export function fuseInMemory(memory: SegmentMemory, options: FusionOptions): SearchRow[] | undefined {
  interface Fused {
    segment_id: string;
    keyword_rank: number | null;
    keyword_raw: number | null;
    vector_rank: number | null;
    vector_raw: number | null;
  }
  const fused = new Map<string, Fused>();
  const entry = (segmentId: string): Fused => {
    let found = fused.get(segmentId);
    if (!found) {
      found = {
        segment_id: segmentId,
        keyword_rank: null,
        keyword_raw: null,
        vector_rank: null,
        vector_raw: null,
      };
      fused.set(segmentId, found);
    }
    return found;
  };
  options.keyword?.hits.forEach((hit, index) => {
    const found = entry(hit.segmentId);
    found.keyword_rank = index + 1;
    found.keyword_raw = hit.raw;
  });
  options.vector?.hits.forEach((hit, index) => {
    const found = entry(hit.segmentId);
    found.vector_rank = index + 1;
    found.vector_raw = 1 - hit.distance;
  });
  const { k } = options;
  const keywordWeight = options.keyword?.weight ?? 0;
  const vectorWeight = options.vector?.weight ?? 0;
  const scoreOf = (row: Fused): number => {
    if (options.scoring === 'keyword') return row.keyword_raw as number;
    if (options.scoring === 'vector') return row.vector_raw as number;
    const keyword = row.keyword_rank === null ? 0 : keywordWeight / (k + row.keyword_rank);
    const vector = row.vector_rank === null ? 0 : vectorWeight / (k + row.vector_rank);
    return keyword + vector;
  };
  const scored = [...fused.values()].map((row) => ({ ...row, score: scoreOf(row) }));
  scored.sort((left, right) => {
    const order = descending(left.score, right.score);
    return order !== 0 ? order : left.segment_id < right.segment_id ? -1 : 1;
  });
  const candidates = scored.length;
  const rows: SearchRow[] = [];
  for (const row of scored.slice(0, options.limit)) {
    const fields = memory.row(row.segment_id);
    if (!fields) return undefined;
    rows.push({ ...row, candidates, ...fields });
  }
  return rows;
}

/** Descending as PostgreSQL orders float8: NaN above every number. */
function descending(left: number, right: number): number {
  const leftKey = Number.isNaN(left) ? Number.POSITIVE_INFINITY : left;
  const rightKey = Number.isNaN(right) ? Number.POSITIVE_INFINITY : right;
  return leftKey === rightKey ? 0 : leftKey > rightKey ? -1 : 1;
}

/** One key for a page key and a copy language (a NUL cannot occur in either). */
function pageEntry(key: string, language: string): string {
  return `${language}\u0000${key}`;
}

function removeFrom(index: Map<string, Set<string>>, key: string | undefined, documentId: string): void {
  if (key === undefined) return;
  const documents = index.get(key);
  documents?.delete(documentId);
  if (documents?.size === 0) index.delete(key);
}
