/**
 * The worker side of word-vectors.ts's conversion: scans the package file and sends back the
 * rows (their buffer moved, not copied) and the words joined by newlines.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { scanPackageFile } from './word-vectors-scan.js';

const port = parentPort;
if (!port) throw new Error('word-vectors-worker.ts runs as a worker thread only');
const { source, maxWords } = workerData as { source: string; maxWords: number };
const scanned = await scanPackageFile(source, maxWords);
port.postMessage(
  { dimensions: scanned.dimensions, words: scanned.words.join('\n'), vectors: scanned.vectors },
  [scanned.vectors.buffer as ArrayBuffer],
);
