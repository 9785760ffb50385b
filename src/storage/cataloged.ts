/**
 * An object store that keeps the database catalogue in step with every put and delete, so the
 * storage API lists from the database instead of reading sidecars. The catalogue row is
 * written after the object: a crash in between leaves an object the catalogue does not list
 * yet, never a listed object that does not exist.
 */
import type { StorageCatalogueRepository } from '../db/storage-catalogue-repository.js';
import type { ObjectStore } from './object-store.js';

export function createCatalogedObjectStore(
  store: ObjectStore,
  catalogue: StorageCatalogueRepository,
): ObjectStore {
  return {
    ...store,
    async put(key, body, options) {
      const info = await store.put(key, body, options);
      await catalogue.upsert(info);
      return info;
    },
    async delete(key) {
      const existed = await store.delete(key);
      await catalogue.remove(key);
      return existed;
    },
  };
}
