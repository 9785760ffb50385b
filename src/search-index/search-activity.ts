/**
 * In-process notice that a search began and ended, keyed by the root Kysely instance like
 * segment-changes.ts. On PGlite the HNSW build waits for a quiet moment (no execution running,
 * no search in progress or begun for a while: src/engine/vector-index-builds.ts), because its
 * one statement holds the database's only session for seconds and every search needs a
 * statement of its own (the query's terms) while it runs.
 */
import { createDatabaseNotices } from './database-notices.js';

type Change = 'started' | 'ended';

const notices = createDatabaseNotices<Change>();

/** Calls `listener` whenever a search begins or ends on `db`; returns the unsubscribe. */
export function onSearchActivity(db: object, listener: (change: Change) => void): () => void {
  return notices.listen(db, listener);
}

/** Tells the listeners of `db` that a search began; returns the call that says it ended. */
export function searchStarted(db: object): () => void {
  notices.send(db, 'started');
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    notices.send(db, 'ended');
  };
}
