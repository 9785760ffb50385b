/**
 * Per-execution state that adapters use and the database implements (db/sync-state-repository.ts,
 * db/fan-in-repository.ts). Here, below both, so that neither looks up at the other: adapters
 * receive them through AdapterResources (adapters/adapter.ts re-exports them), db/ implements
 * them without importing adapter code.
 */

/**
 * What an incremental source knew after earlier runs of the same pipeline config, by scope
 * (a wiki space) and item (a page id). Values written by this run count as known to later
 * runs only once this run completes.
 */
export interface SyncState {
  /** Items written by runs that completed. */
  settled(scope: string): Promise<Map<string, Record<string, unknown>>>;
  /** Every item of the scope (or those of `keys`), whatever became of the run that wrote it. */
  all(scope: string, keys?: readonly string[]): Promise<Map<string, Record<string, unknown>>>;
  /** Writes items as this run's. */
  put(scope: string, items: ReadonlyArray<{ key: string; value: Record<string, unknown> }>): Promise<void>;
  remove(scope: string, keys: readonly string[]): Promise<void>;
}

/** Keys claimed once per execution, across messages and instances. */
export interface ExecutionClaims {
  /** The keys claimed now (none claimed before in `scope`), while the scope holds under `limit`. */
  claim(scope: string, keys: readonly string[], limit?: number): Promise<Set<string>>;
}

/**
 * A join within an execution: the messages of one group (a package's conversations) arrive
 * one by one, on any instance, possibly more than once; the group completes once all `total`
 * items have arrived.
 */
export interface ExecutionFanIn {
  /**
   * Records `item`'s arrival in `group` (a redelivery records nothing new). Returns every
   * arrival of the group, sorted by item, when this arrival is the one that completed it —
   * to exactly one item, again if that same item arrives again (its message was retried
   * after the completion), and to no other. Otherwise undefined.
   */
  arrive(
    group: string,
    item: string,
    value: Record<string, unknown>,
    total: number,
  ): Promise<Array<{ item: string; value: Record<string, unknown> }> | undefined>;
}
