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
import type { StorageCatalogueRepository } from '../db/storage-catalogue-repository.js';
import { createBatcher } from '../runtime/batcher.js';
import type { ObjectInfo, ObjectStore } from './object-store.js';

export function createCatalogedObjectStore(
  store: ObjectStore,
  catalogue: StorageCatalogueRepository,
): ObjectStore {
  // A failed group is retried row by row, so one bad row (say, metadata PostgreSQL refuses)
  // fails only its own put, as it did before rows were grouped.
  const record = createBatcher(async (infos: ObjectInfo[]): Promise<unknown[]> => {
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
  });
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
