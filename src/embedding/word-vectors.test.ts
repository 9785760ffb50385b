import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadWordVectors, readVectorsFile, wordVectorsOf, writeVectorsFile } from './word-vectors.js';

/** A file in the package's shape: `{"words": [...], "vectors": {"word": [v..., l2norm, rank]}}`. */
function packageFile(entries: Record<string, number[]>): string {
  const words = Object.keys(entries);
  const vectors = Object.fromEntries(
    words.map((word, rank) => {
      const values = entries[word] as number[];
      return [word, [...values, Math.hypot(...values), rank]];
    }),
  );
  return JSON.stringify({
    precision: 8,
    l2NormIndex: 3,
    wordIndex: 4,
    size: words.length,
    dimensions: 3,
    words,
    vectors,
  });
}

describe('loadWordVectors', () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(path.join(os.tmpdir(), 'weir-word-vectors-'));
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('keeps the most frequent usable words, unit length, and reads them back from its cache', async () => {
    const source = path.join(directory, 'vectors.json');
    await writeFile(
      source,
      packageFile({
        the: [1, 0, 0],
        ',': [0, 1, 0],
        vacuum: [3, 4, 0],
        "don't": [1, 1, 1],
        Table: [0, 0, 2],
        index: [0, 2, 0],
      }),
    );
    const cacheDirectory = path.join(directory, 'cache');
    const loaded = await loadWordVectors({ source, cacheDirectory, maxWords: 3 });
    // Punctuation, apostrophes and capitals are not usable; then the three most frequent.
    expect(loaded?.words).toEqual(['the', 'vacuum', 'index']);
    const row = loaded?.indexOf('vacuum') as number;
    expect([...((await loaded?.rows([row])) ?? [])].map((value) => value.toFixed(2))).toEqual([
      '0.60',
      '0.80',
      '0.00',
    ]);
    expect(await readdir(cacheDirectory)).toHaveLength(1);
    // The cache answers even when the source is gone.
    await rm(source);
    const cached = await loadWordVectors({ source, cacheDirectory, maxWords: 3 });
    expect(cached?.words).toEqual(loaded?.words);
    expect([...((await cached?.rows([0, 1, 2])) ?? [])]).toEqual([
      ...((await loaded?.rows([0, 1, 2])) ?? []),
    ]);
    await loaded?.close();
    await cached?.close();
  });

  it('reads rows from the file bit for bit as held in memory, in the order asked, near and far apart', async () => {
    // More rows than one read spans (2,048), so far-apart rows take reads of their own.
    const count = 5000;
    const dimensions = 3;
    const words = Array.from({ length: count }, (_, row) => `w${row}`);
    const values = Float32Array.from({ length: count * dimensions }, (_, index) => Math.sin(index) / 3);
    const file = path.join(directory, 'rows.bin');
    await writeVectorsFile(words, values, dimensions, file);
    const fromFile = await readVectorsFile(file);
    const inMemory = wordVectorsOf(words, values, dimensions);
    const asked = [4999, 0, 17, 17, 2047, 2048, 4095, 3, 4998];
    expect(fromFile?.indexOf('w2048')).toBe(2048);
    expect([...((await fromFile?.rows(asked)) ?? [])]).toEqual([...(await inMemory.rows(asked))]);
    expect([...((await fromFile?.rows([2048])) ?? [])]).toEqual([...values.subarray(6144, 6147)]);
    expect((await fromFile?.rows([]))?.length).toBe(0);
    await expect(fromFile?.rows([count])).rejects.toThrow(RangeError);
    // The handle stays open: a rebuild replacing the file leaves the rows as they were.
    await writeVectorsFile(words, new Float32Array(count * dimensions), dimensions, file);
    expect([...((await fromFile?.rows(asked)) ?? [])]).toEqual([...(await inMemory.rows(asked))]);
    await fromFile?.close();
  });

  it('rejects without the package file (the shared loader then skips expansion)', async () => {
    await expect(
      loadWordVectors({
        source: path.join(directory, 'missing.json'),
        cacheDirectory: path.join(directory, 'none'),
      }),
    ).rejects.toThrow();
  });
});
