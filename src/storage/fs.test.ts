import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFilesystemObjectStore } from './fs.js';
import { describeObjectStoreConformance } from './object-store.conformance.js';

async function temporaryStore() {
  const root = await mkdtemp(path.join(tmpdir(), 'weir-fs-store-'));
  return {
    root,
    store: createFilesystemObjectStore(root),
    dispose: () => rm(root, { recursive: true, force: true }),
  };
}

describeObjectStoreConformance('filesystem', temporaryStore);

describe('filesystem object store specifics', () => {
  it('writes the sidecar as <key>.meta.json beside the object', async () => {
    const { root, store, dispose } = await temporaryStore();
    await store.put('e/s/page.md', '# Title', { contentType: 'text/markdown', metadata: { stage: 's' } });
    const sidecar = JSON.parse(await readFile(path.join(root, 'e/s/page.md.meta.json'), 'utf8'));
    expect(sidecar).toMatchObject({
      key: 'e/s/page.md',
      size: 7,
      content_type: 'text/markdown',
      metadata: { stage: 's' },
    });
    await dispose();
  });

  it('describes an object whose sidecar is missing from the file itself', async () => {
    const { root, store, dispose } = await temporaryStore();
    await writeFile(path.join(root, 'by-hand.txt'), 'abc');
    expect(await store.stat('by-hand.txt')).toMatchObject({
      size: 3,
      content_type: 'application/octet-stream',
    });
    await dispose();
  });

  it('makes a folder again when it was removed after a put into it', async () => {
    const { root, store, dispose } = await temporaryStore();
    await store.put('e/s/a.f32', 'a');
    // The store's own delete removes the emptied folders; a hand may remove one too.
    await store.delete('e/s/a.f32');
    await store.put('e/s/b.f32', 'b');
    await rm(path.join(root, 'e'), { recursive: true, force: true });
    await store.put('e/s/c.f32', 'c');
    expect((await store.get('e/s/c.f32')).toString()).toBe('c');
    expect(await store.stat('e/s/b.f32')).toBeUndefined();
    await dispose();
  });

  it('does not follow a symlink out of the root', async () => {
    const { root, store, dispose } = await temporaryStore();
    const outside = await mkdtemp(path.join(tmpdir(), 'weir-outside-'));
    await writeFile(path.join(outside, 'secret.txt'), 'secret');
    await symlink(outside, path.join(root, 'link'));
    expect((await store.list()).objects).toEqual([]);
    expect(await store.stat('link/secret.txt')).toBeUndefined();
    await rm(outside, { recursive: true, force: true });
    await dispose();
  });

  it('never follows a symlinked sidecar or object file out of the store', async () => {
    const { root, store, dispose } = await temporaryStore();
    const outside = await mkdtemp(path.join(tmpdir(), 'weir-outside-'));
    await writeFile(
      path.join(outside, 'secret.json'),
      JSON.stringify({
        key: 'x',
        size: 6,
        content_type: 'text/plain',
        sha256: 's',
        metadata: { secret: 'yes' },
      }),
    );
    await writeFile(path.join(outside, 'secret.txt'), 'secret');
    // A real object whose sidecar has been replaced by a link to a file outside.
    await store.put('e/s/page.md', '# Title');
    await rm(path.join(root, 'e/s/page.md.meta.json'));
    await symlink(path.join(outside, 'secret.json'), path.join(root, 'e/s/page.md.meta.json'));
    const described = await store.stat('e/s/page.md');
    expect(described?.metadata).toEqual({});
    expect(described?.size).toBe(7);
    // An object file that is a link to a file outside, with a sidecar of its own.
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'e/s/linked.txt'));
    await writeFile(
      path.join(root, 'e/s/linked.txt.meta.json'),
      JSON.stringify({
        key: 'e/s/linked.txt',
        size: 6,
        content_type: 'text/plain',
        sha256: 's',
        metadata: {},
      }),
    );
    await expect(store.get('e/s/linked.txt')).rejects.toMatchObject({ code: 'object_not_found' });
    await expect(store.stream('e/s/linked.txt')).rejects.toMatchObject({ code: 'object_not_found' });
    expect(await store.stat('e/s/linked.txt')).toBeUndefined();
    await rm(outside, { recursive: true, force: true });
    await dispose();
  });

  // A small object is put synchronously, a large one through the thread pool (fs.ts): both
  // clean up alike.
  it.each([
    ['a small', 'second'],
    ['a large', 'second'.repeat(20_000)],
  ])('leaves no temporary file when the sidecar of %s object cannot be put in place', async (_, second) => {
    const { root, store, dispose } = await temporaryStore();
    await store.put('e/s/page.md', 'first');
    // A folder where the sidecar goes: its temporary file is written, its rename fails. The
    // object is renamed first, as ever, so it is the new one.
    await rm(path.join(root, 'e/s/page.md.meta.json'));
    await mkdir(path.join(root, 'e/s/page.md.meta.json', 'x'), { recursive: true });
    await expect(store.put('e/s/page.md', second)).rejects.toThrow();
    expect(await readFile(path.join(root, 'e/s/page.md'), 'utf8')).toBe(second);
    expect((await readdir(path.join(root, 'e/s'))).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    await dispose();
  });

  it('refuses a key that would turn an object into a folder', async () => {
    const { store, dispose } = await temporaryStore();
    await store.put('a', 'file');
    await expect(store.put('a/b', 'nested')).rejects.toMatchObject({ code: 'storage_key_invalid' });
    await dispose();
  });
});

describe('filesystem object store confinement', () => {
  it('refuses a folder it wrote into once it is replaced by a symlink', async () => {
    const { root, store, dispose } = await temporaryStore();
    await store.put('e/s/a.f32', 'a');
    const outside = await mkdtemp(path.join(tmpdir(), 'weir-outside-'));
    await rm(path.join(root, 'e/s'), { recursive: true, force: true });
    await symlink(outside, path.join(root, 'e/s'));
    await expect(store.put('e/s/planted.f32', 'x')).rejects.toMatchObject({ code: 'storage_key_invalid' });
    await expect(readFile(path.join(outside, 'planted.f32'))).rejects.toThrow();
    await rm(outside, { recursive: true, force: true });
    await dispose();
  });

  it('reads nothing through a folder above a key replaced by a symlink after reads and writes there', async () => {
    const { root, store, dispose } = await temporaryStore();
    await store.put('e/s/page.md', 'inside');
    expect((await store.get('e/s/page.md')).toString()).toBe('inside');
    // The same key's files outside, and the upper folder `e` turned into a link to them.
    const outside = await mkdtemp(path.join(tmpdir(), 'weir-outside-'));
    await mkdir(path.join(outside, 's'));
    await writeFile(path.join(outside, 's/page.md'), 'secret');
    await writeFile(
      path.join(outside, 's/page.md.meta.json'),
      JSON.stringify({ key: 'e/s/page.md', size: 6 }),
    );
    await rm(path.join(root, 'e'), { recursive: true, force: true });
    await symlink(outside, path.join(root, 'e'));
    expect(await store.stat('e/s/page.md')).toBeUndefined();
    await expect(store.get('e/s/page.md')).rejects.toMatchObject({ code: 'object_not_found' });
    await expect(store.put('e/s/page.md', 'x')).rejects.toMatchObject({ code: 'storage_key_invalid' });
    expect(await readFile(path.join(outside, 's/page.md'), 'utf8')).toBe('secret');
    await rm(outside, { recursive: true, force: true });
    await dispose();
  });

  it('refuses to write through a symlinked folder', async () => {
    const { root, store, dispose } = await temporaryStore();
    const outside = await mkdtemp(path.join(tmpdir(), 'weir-outside-'));
    await symlink(outside, path.join(root, 'link'));
    await expect(store.put('link/planted.txt', 'x')).rejects.toMatchObject({ code: 'storage_key_invalid' });
    await expect(readFile(path.join(outside, 'planted.txt'))).rejects.toThrow();
    await rm(outside, { recursive: true, force: true });
    await dispose();
  });
  it('answers 503 storage_unavailable when the file system fails under it', async () => {
    const { root, store, dispose } = await temporaryStore();
    // The root replaced by a plain file: every write below it fails in the file system.
    await rm(root, { recursive: true, force: true });
    await writeFile(root, 'not a directory');
    await expect(store.put('e/s/a.json', '{}')).rejects.toMatchObject({
      code: 'storage_unavailable',
      status: 503,
    });
    await expect(store.check()).rejects.toMatchObject({ code: 'storage_unavailable' });
    // Faults of the request stay what they are.
    await expect(store.put('../escape', 'x')).rejects.toMatchObject({ code: 'storage_key_invalid' });
    await dispose();
  });
});
