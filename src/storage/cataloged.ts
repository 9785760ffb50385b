/**
 * An object store that keeps the database catalogue in step with every put and delete, so the
 * storage API lists from the database instead of reading sidecars. The catalogue row is
 * written after the object: a crash in between leaves an object the catalogue does not list
 * yet, never a listed object that does not exist.
 *
 * Rows of concurrent puts are group-committed: puts that finish while a catalogue write is in
 * flight go together in the next multi-row upsert (one statement instead of one per object).
 * Each put still resolves only after its own row is written, and its row is queued only after
 * its object is in place, so the ordering above holds for every object.
 */
import type { DatabaseKind } from '../db/database.js';
import type { StorageCatalogueRepository } from '../db/storage-catalogue-repository.js';
import { createBatcher } from '../runtime/batcher.js';
import type { ObjectInfo, ObjectStore } from './object-store.js';

/**
 * Catalogue statements written at once on each kind of database (createBatcher): PGlite runs
 * one statement at a time, so a second batch would only queue there and be smaller; a server
 * runs them side by side, and one at a time the server path's puts each waited for a whole
 * statement before theirs (issue 36). Rows go in key order (storage-catalogue-repository.ts),
 * so two statements upserting the same keys lock them in the same order.
 */
export function catalogueWritesAtOnce(kind: DatabaseKind): number {
  return kind === 'pglite' ? 1 : 4;
}

export function createCatalogedObjectStore(
  store: ObjectStore,
  catalogue: StorageCatalogueRepository,
  options: { concurrentWrites?: number } = {},
): ObjectStore {
  // A failed group is retried row by row, so one bad row (say, metadata PostgreSQL refuses)
  // fails only its own put, as it did before rows were grouped.
  const record = createBatcher(
    async (infos: ObjectInfo[]): Promise<unknown[]> => {
      try {
        await catalogue.upsertMany(infos);
        return infos.map(() => undefined);
      } catch (error) {
        if (infos.length === 1) return [error ?? new Error('catalogue write failed')];
        return Promise.all(
          infos.map((info) =>
            catalogue.upsert(info).then(
              () => undefined,
              (single: unknown) => single ?? new Error('catalogue write failed'),
            ),
          ),
        );
      }
    },
    500,
    options.concurrentWrites ?? 1,
  );
  return {
    ...store,
    async put(key, body, options) {
      const info = await store.put(key, body, options);
      const failure = await record(info);
      if (failure !== undefined) throw failure;
      return info;
    },
    async delete(key) {
      const existed = await store.delete(key);
      await catalogue.remove(key);
      return existed;
    },
  };
}
