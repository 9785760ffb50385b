/**
 * In-process notice that the segments of some documents changed (written, re-written, trimmed
 * or deleted), sent by every write path of the knowledge index after its transaction
 * committed: knowledge-index.ts and src/search/indexed-documents.ts. The embedded search's
 * in-memory keyword index (src/search/keyword-memory-index.ts) listens, and re-reads those
 * documents' segments from the database, which stays the source of truth. Embedding upserts
 * (knowledge-vectors.ts) send their own notice, by segment id, for the vectors it holds.
 *
 * Keyed by the root Kysely instance that one `Database` hands to the engine and the API, so
 * two databases in one process (tests) never hear each other.
 */
import { createDatabaseNotices } from './database-notices.js';

type Listener = (ids: readonly string[]) => void;

const segmentNotices = createDatabaseNotices<readonly string[]>();
const embeddingNotices = createDatabaseNotices<readonly string[]>();

/** Calls `listener` with the document ids of every change written through `db`; returns the unsubscribe. */
export function onSegmentsChanged(db: object, listener: Listener): () => void {
  return segmentNotices.listen(db, listener);
}

/** Tells the listeners of `db` that these documents' segments changed (after the commit). */
export function segmentsChanged(db: object, documentIds: readonly string[]): void {
  if (documentIds.length === 0) return;
  segmentNotices.send(db, documentIds);
}

/**
 * Calls `listener` with the segment ids of every embedding upsert written through `db` (the
 * in-memory vectors of the embedded search re-read them); returns the unsubscribe.
 */
export function onEmbeddingsChanged(db: object, listener: Listener): () => void {
  return embeddingNotices.listen(db, listener);
}

/** Tells the listeners of `db` that these segments' embeddings were written (after the commit). */
export function embeddingsChanged(db: object, segmentIds: readonly string[]): void {
  if (segmentIds.length === 0) return;
  embeddingNotices.send(db, segmentIds);
}
