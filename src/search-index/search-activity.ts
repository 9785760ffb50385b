/**
 * In-process notice that a search began, keyed by the root Kysely instance like
 * segment-changes.ts. On PGlite the HNSW build waits for a quiet moment (no execution running,
 * no search for a while: src/engine/vector-index-builds.ts), because its one statement holds
 * the database's only session for seconds and every search needs a statement of its own
 * (the query's terms) while it runs.
 */
type Listener = () => void;

const listeners = new WeakMap<object, Set<Listener>>();

/** Calls `listener` whenever a search begins on `db`; returns the unsubscribe. */
export function onSearchStarted(db: object, listener: Listener): () => void {
  let set = listeners.get(db);
  if (!set) {
    set = new Set();
    listeners.set(db, set);
  }
  set.add(listener);
  return () => set.delete(listener);
}

/** Tells the listeners of `db` that a search began. */
export function searchStarted(db: object): void {
  for (const listener of listeners.get(db) ?? []) listener();
}
