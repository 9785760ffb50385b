/**
 * In-process notices keyed by the root Kysely instance that one `Database` hands to the engine
 * and the API, so two databases in one process (tests) never hear each other. Each kind of
 * notice (segments changed, embeddings changed, search activity) is one of these.
 */
export interface DatabaseNotices<Value> {
  /** Calls `listener` with every notice sent for `db`; returns the unsubscribe. */
  listen(db: object, listener: (value: Value) => void): () => void;
  /** Calls the listeners of `db` with `value`. */
  send(db: object, value: Value): void;
}

export function createDatabaseNotices<Value>(): DatabaseNotices<Value> {
  const listeners = new WeakMap<object, Set<(value: Value) => void>>();
  return {
    listen(db, listener) {
      let set = listeners.get(db);
      if (!set) {
        set = new Set();
        listeners.set(db, set);
      }
      set.add(listener);
      return () => set.delete(listener);
    },
    send(db, value) {
      for (const listener of listeners.get(db) ?? []) listener(value);
    },
  };
}
