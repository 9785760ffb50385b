/**
 * One conformance suite for every ObjectStore implementation (filesystem now, S3 later):
 * what a caller relies on, whatever holds the bytes.
 */
import { buffer } from 'node:stream/consumers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../errors.js';
import type { ObjectStore } from './object-store.js';

export function describeObjectStoreConformance(
  name: string,
  createStore: () => Promise<{ store: ObjectStore; dispose(): Promise<void> }>,
): void {
  describe(`object store conformance: ${name}`, () => {
    let store: ObjectStore;
    let dispose: () => Promise<void>;
    beforeEach(async () => {
      ({ store, dispose } = await createStore());
    });
    afterEach(async () => {
      await dispose();
    });

    it('round-trips bytes, content type, hash and metadata', async () => {
      const body = Buffer.from([0, 1, 2, 255, 10, 13]);
      const written = await store.put('exec-1/web_scraper/page.bin', body, {
        contentType: 'application/x-test',
        metadata: { execution_id: 'exec-1', stage: 'web_scraper' },
      });
      expect(written.size).toBe(6);
      expect(written.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(await store.get('exec-1/web_scraper/page.bin')).toEqual(body);
      const info = await store.stat('exec-1/web_scraper/page.bin');
      expect(info).toMatchObject({
        key: 'exec-1/web_scraper/page.bin',
        size: 6,
        content_type: 'application/x-test',
        sha256: written.sha256,
        metadata: { execution_id: 'exec-1', stage: 'web_scraper' },
      });
    });

    it('overwrites an object and its sidecar together', async () => {
      await store.put('a/b.txt', 'first', { metadata: { version: 1 } });
      await store.put('a/b.txt', 'second!', { metadata: { version: 2 } });
      expect((await store.get('a/b.txt')).toString()).toBe('second!');
      expect(await store.stat('a/b.txt')).toMatchObject({ size: 7, metadata: { version: 2 } });
    });

    it('answers not found for a missing object and undefined from stat', async () => {
      await expect(store.get('missing/object')).rejects.toMatchObject({
        code: 'object_not_found',
        status: 404,
      });
      await expect(store.stream('missing/object')).rejects.toBeInstanceOf(AppError);
      expect(await store.stat('missing/object')).toBeUndefined();
    });

    it.each([
      ['../escape'],
      ['a/../../etc/passwd'],
      ['/etc/passwd'],
      ['a\\b'],
      ['a\u0000b'],
      ['a//b'],
      ['a/./b'],
      ['folder/'],
      [''],
      ['C:/windows'],
      ['x/y.meta.json'],
      ['x'.repeat(1025)],
    ])('refuses the key %j with a 400', async (key) => {
      await expect(store.put(key, 'x')).rejects.toMatchObject({ code: 'storage_key_invalid', status: 400 });
      await expect(store.get(key)).rejects.toMatchObject({ status: 400 });
    });

    it('lists objects sorted, without sidecars, filtered by prefix', async () => {
      for (const key of ['e1/s2/b.md', 'e1/s1/a.md', 'e1/s1/c.json', 'e2/s1/z.md', 'e10/x.md']) {
        await store.put(key, key);
      }
      const all = await store.list();
      expect(all.objects.map((object) => object.key)).toEqual([
        'e1/s1/a.md',
        'e1/s1/c.json',
        'e1/s2/b.md',
        'e10/x.md',
        'e2/s1/z.md',
      ]);
      expect(all.commonPrefixes).toEqual([]);
      const underE1 = await store.list({ prefix: 'e1/' });
      expect(underE1.objects.map((object) => object.key)).toEqual([
        'e1/s1/a.md',
        'e1/s1/c.json',
        'e1/s2/b.md',
      ]);
      const partialSegment = await store.list({ prefix: 'e1' });
      expect(partialSegment.objects).toHaveLength(4);
      await expect(store.list({ prefix: '../' })).rejects.toMatchObject({ code: 'storage_key_invalid' });
    });

    it('groups keys into common prefixes with a delimiter', async () => {
      for (const key of ['root.txt', 'e1/s1/a.md', 'e1/s2/b.md', 'e2/s1/z.md']) await store.put(key, key);
      const top = await store.list({ delimiter: '/' });
      expect(top.objects.map((object) => object.key)).toEqual(['root.txt']);
      expect(top.commonPrefixes).toEqual(['e1/', 'e2/']);
      const stages = await store.list({ prefix: 'e1/', delimiter: '/' });
      expect(stages.objects).toEqual([]);
      expect(stages.commonPrefixes).toEqual(['e1/s1/', 'e1/s2/']);
    });

    it('pages with limit and startAfter', async () => {
      for (const key of ['k/1', 'k/2', 'k/3', 'k/4', 'k/5']) await store.put(key, key);
      const first = await store.list({ prefix: 'k/', limit: 2 });
      expect(first.objects.map((object) => object.key)).toEqual(['k/1', 'k/2']);
      expect(first.truncated).toBe(true);
      const next = await store.list({ prefix: 'k/', limit: 2, startAfter: 'k/2' });
      expect(next.objects.map((object) => object.key)).toEqual(['k/3', 'k/4']);
      const last = await store.list({ prefix: 'k/', limit: 2, startAfter: 'k/4' });
      expect(last.objects.map((object) => object.key)).toEqual(['k/5']);
      expect(last.truncated).toBe(false);
    });

    it('streams whole objects and byte ranges', async () => {
      await store.put('s/text.txt', 'hello, world');
      expect((await buffer(await store.stream('s/text.txt'))).toString()).toBe('hello, world');
      expect((await buffer(await store.stream('s/text.txt', { start: 7, end: 11 }))).toString()).toBe(
        'world',
      );
    });

    it('deletes an object with its sidecar and drops the emptied prefix', async () => {
      await store.put('d/e/f.txt', 'x');
      expect(await store.delete('d/e/f.txt')).toBe(true);
      expect(await store.delete('d/e/f.txt')).toBe(false);
      expect(await store.stat('d/e/f.txt')).toBeUndefined();
      expect((await store.list({ delimiter: '/' })).commonPrefixes).toEqual([]);
    });

    it('passes its health check', async () => {
      await expect(store.check()).resolves.toBeUndefined();
      expect((await store.list()).objects).toEqual([]);
    });
  });
}
