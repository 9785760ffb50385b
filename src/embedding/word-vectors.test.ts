import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadWordVectors } from './word-vectors.js';

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
    expect(
      [...(loaded?.vectors.subarray(row * 3, row * 3 + 3) ?? [])].map((value) => value.toFixed(2)),
    ).toEqual(['0.60', '0.80', '0.00']);
    expect(await readdir(cacheDirectory)).toHaveLength(1);
    // The cache answers even when the source is gone.
    await rm(source);
    const cached = await loadWordVectors({ source, cacheDirectory, maxWords: 3 });
    expect(cached?.words).toEqual(loaded?.words);
    expect([...(cached?.vectors ?? [])]).toEqual([...(loaded?.vectors ?? [])]);
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
