import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTargets } from '../../test/helpers/databases.js';
import type { Database } from '../db/database.js';
import { createStorageCatalogueRepository, extensionOf } from '../db/storage-catalogue-repository.js';
import { createCatalogedObjectStore } from './cataloged.js';
import { createFilesystemObjectStore } from './fs.js';
import { describeObjectStoreConformance } from './object-store.conformance.js';

describe.each(databaseTargets())('catalogued filesystem store on $name', (target) => {
  let database: Database;
  beforeAll(async () => {
    database = await target.open();
  });
  afterAll(async () => {
    await database?.close();
  });

  describeObjectStoreConformance('filesystem + catalogue', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'weir-cataloged-'));
    await database.db.deleteFrom('storage_objects').execute();
    const store = createCatalogedObjectStore(
      createFilesystemObjectStore(root),
      createStorageCatalogueRepository(database.db),
    );
    return { store, dispose: () => rm(root, { recursive: true, force: true }) };
  });

  it('keeps one catalogue row per object, updated on overwrite and removed on delete', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'weir-cataloged-'));
    const catalogue = createStorageCatalogueRepository(database.db);
    const store = createCatalogedObjectStore(createFilesystemObjectStore(root), catalogue);
    await store.put('e/s/page.MD', 'one', { metadata: { execution_id: 'e', stage: 's' } });
    await store.put('e/s/page.MD', 'two!', { metadata: { execution_id: 'e', stage: 's' } });
    const row = await catalogue.find('e/s/page.MD');
    expect(row).toMatchObject({ execution_id: 'e', stage: 's', extension: '.md' });
    expect(Number(row?.size)).toBe(4);
    await store.delete('e/s/page.MD');
    expect(await catalogue.find('e/s/page.MD')).toBeUndefined();
    await rm(root, { recursive: true, force: true });
  });
});

describe('extensionOf', () => {
  it('takes the last dot of the last segment, lower-cased', () => {
    expect(extensionOf('a.b/c.TAR.GZ')).toBe('.gz');
    expect(extensionOf('a.b/README')).toBe('');
    expect(extensionOf('.hidden')).toBe('');
  });
});
