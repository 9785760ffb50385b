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

  it('groups the rows of concurrent puts, and a row the database refuses fails only its own put', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'weir-cataloged-'));
    const catalogue = createStorageCatalogueRepository(database.db);
    // The first write is held back until every object is on disk, so the other rows queue
    // behind it and go in groups (on a fast disk they might otherwise each go alone).
    let release!: () => void;
    const allWritten = new Promise<void>((resolve) => {
      release = resolve;
    });
    const groups: number[] = [];
    // Counts objects whose put on disk has returned: the catalogued store queues the row in
    // the continuation of that put, so once all have returned every row waits in the queue.
    // (A sidecar file on disk can be seen before its put has returned.)
    const files = createFilesystemObjectStore(root);
    let stored = 0;
    const counting = {
      ...files,
      async put(...args: Parameters<typeof files.put>) {
        const info = await files.put(...args);
        stored++;
        return info;
      },
    };
    const store = createCatalogedObjectStore(counting, {
      ...catalogue,
      async upsertMany(infos) {
        groups.push(infos.length);
        if (groups.length === 1) await allWritten;
        return catalogue.upsertMany(infos);
      },
    });
    const keys = Array.from({ length: 40 }, (_, index) => `g/s/object-${index}.bin`);
    const puts = keys.map((key, index) =>
      // jsonb refuses the NUL character: this one row cannot be written.
      store.put(key, `body ${index}`, { metadata: { stage: 's', note: index === 7 ? 'bad\u0000' : 'ok' } }),
    );
    await waitFor(() => stored === keys.length && groups.length > 0);
    release();
    const results = await Promise.allSettled(puts);
    // Every row queued while the first group was held went in one group after it (how many
    // joined the first group depends on how many puts finished in its turn).
    expect(groups.length).toBeLessThanOrEqual(2);
    expect(groups.reduce((total, size) => total + size, 0)).toBe(keys.length);
    expect(results.map((result) => result.status)).toEqual(
      keys.map((_, index) => (index === 7 ? 'rejected' : 'fulfilled')),
    );
    const listed = await catalogue.list({ prefix: 'g/s/', limit: 100, offset: 0 });
    expect(listed.total).toBe(39);
    expect(listed.objects.map((row) => row.key)).not.toContain('g/s/object-7.bin');
    await rm(root, { recursive: true, force: true });
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the objects');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('extensionOf', () => {
  it('takes the last dot of the last segment, lower-cased', () => {
    expect(extensionOf('a.b/c.TAR.GZ')).toBe('.gz');
    expect(extensionOf('a.b/README')).toBe('');
    expect(extensionOf('.hidden')).toBe('');
  });
});
