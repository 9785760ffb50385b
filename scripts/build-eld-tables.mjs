/**
 * Part of the build (scripts/build-if-stale.mjs), after tsc: writes ELD's n-gram table, pruned
 * to the languages the index stems, into dist/eld-tables/ (src/search-index/eld-prebuilt.ts), so
 * that a start reads it instead of importing ELD's 50,000-object module on a worker thread.
 * Skipped when a matching file is already there.
 */

import { prebuildEldTable } from '../dist/search-index/eld-tables.js';
import { eldLanguageCodes } from '../dist/search-index/language-detection.js';

const started = performance.now();
const written = await prebuildEldTable(eldLanguageCodes());
console.log(`language tables ready in ${written} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
