/**
 * A small in-process LRU of LLM verdicts (a Map keeps insertion order: a hit is re-inserted at
 * the end, the oldest entry is evicted first). Per process, not shared between instances and
 * lost on restart: it saves repeated calls for content seen again (re-runs, replays,
 * duplicated pages) and nothing depends on it for correctness.
 */
export interface VerdictCache<V> {
  get(key: string): V | undefined;
  set(key: string, value: V): void;
  readonly size: number;
}

export function createVerdictCache<V>(capacity: number): VerdictCache<V> {
  const entries = new Map<string, V>();
  return {
    get(key) {
      const value = entries.get(key);
      if (value === undefined) return undefined;
      entries.delete(key);
      entries.set(key, value);
      return value;
    },
    set(key, value) {
      entries.delete(key);
      entries.set(key, value);
      while (entries.size > capacity) {
        const oldest = entries.keys().next().value as string;
        entries.delete(oldest);
      }
    },
    get size() {
      return entries.size;
    },
  };
}
