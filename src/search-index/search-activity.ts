/**
 * In-process notice that a search began and ended, keyed by the root Kysely instance like
 * segment-changes.ts. On PGlite the HNSW build waits for a quiet moment (no execution running,
 * no search in progress or begun for a while: src/engine/vector-index-builds.ts), because its
 * one statement holds the database's only session for seconds and every search needs a
 * statement of its own (the query's terms) while it runs.
 */
type Listener = (change: 'started' | 'ended') => void;

const listeners = new WeakMap<object, Set<Listener>>();

/** Calls `listener` whenever a search begins or ends on `db`; returns the unsubscribe. */
export function onSearchActivity(db: object, listener: Listener): () => void {
  let set = listeners.get(db);
  if (!set) {
    set = new Set();
    listeners.set(db, set);
  }
  set.add(listener);
  return () => set.delete(listener);
}

/** Tells the listeners of `db` that a search began; returns the call that says it ended. */
export function searchStarted(db: object): () => void {
  const notify = (change: 'started' | 'ended') => {
    for (const listener of listeners.get(db) ?? []) listener(change);
  };
  notify('started');
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    notify('ended');
  };
}
