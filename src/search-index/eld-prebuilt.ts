/**
 * ELD's compact table (eld-tables.ts) written once at build time (scripts/build-eld-tables.mjs,
 * into dist/eld-tables/), as the word vectors are: a start then reads about 1 MB of JSON in
 * milliseconds instead of importing ELD's n-gram module (some 50,000 JavaScript objects) on a
 * worker thread, 0.43-0.46 s of CPU beside PGlite's open on the machine's cores (issue 35).
 *
 * The file names what it was built from: ELD's version, the size of its n-gram module and the
 * languages kept. One that does not match the installed package or the subset asked for is
 * ignored, and the worker builds the table as before. The values are the worker's, element for
 * element (eld-tables.test.ts).
 */
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { packagePath } from '../runtime/package-root.js';
import type { CompactNgramTable } from './eld-tables.js';

/** Where the build leaves the table (the same from src/ and dist/). */
export const prebuiltEldTableFile = packagePath('dist/eld-tables/extrasmall.json');

const fileFormat = 1;

interface StoredTable {
  format: number;
  /** ELD's version and its n-gram module's size: a reinstalled package with other data differs. */
  source: string;
  /** The languages kept, sorted. */
  codes: string;
  type: string;
  languageCodes: string[];
  keys: string[];
  starts: number[];
  /** Bytes, in base64. */
  languages: string;
  scores: string;
}

/** The installed ELD's `extrasmall` entry and what identifies its data. */
async function installedEld(): Promise<{ entryUrl: string; source: string }> {
  const entryUrl = import.meta.resolve('eld/extrasmall');
  const [manifest, ngrams] = await Promise.all([
    readFile(new URL('../../package.json', entryUrl), 'utf8'),
    stat(new URL('../ngrams/extrasmall.js', entryUrl)),
  ]);
  return { entryUrl, source: `${(JSON.parse(manifest) as { version: string }).version}:${ngrams.size}` };
}

const codesKey = (codes: readonly string[]) => [...codes].sort().join(',');

/** The prebuilt table for `codes`, or undefined when there is none or it was built from other data. */
export async function readPrebuiltEldTable(
  codes: readonly string[],
  file = prebuiltEldTableFile,
): Promise<CompactNgramTable | undefined> {
  let stored: StoredTable;
  try {
    stored = JSON.parse(await readFile(file, 'utf8')) as StoredTable;
  } catch (error) {
    // No file (a build without the step, or tests from source): the worker builds the table.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || error instanceof SyntaxError) return undefined;
    throw error;
  }
  const { entryUrl, source } = await installedEld();
  if (stored.format !== fileFormat || stored.source !== source || stored.codes !== codesKey(codes)) {
    return undefined;
  }
  return {
    entryUrl,
    type: stored.type,
    languageCodes: stored.languageCodes,
    keys: stored.keys,
    starts: Uint32Array.from(stored.starts),
    languages: new Uint8Array(Buffer.from(stored.languages, 'base64')),
    scores: new Uint8Array(Buffer.from(stored.scores, 'base64')),
  };
}

/** Writes the table for `codes` (atomically: a start reading meanwhile sees the old file or none). */
export async function writePrebuiltEldTable(
  table: CompactNgramTable,
  codes: readonly string[],
  file = prebuiltEldTableFile,
): Promise<void> {
  const stored: StoredTable = {
    format: fileFormat,
    source: (await installedEld()).source,
    codes: codesKey(codes),
    type: table.type,
    languageCodes: table.languageCodes,
    keys: table.keys,
    starts: Array.from(table.starts),
    languages: Buffer.from(table.languages).toString('base64'),
    scores: Buffer.from(table.scores).toString('base64'),
  };
  await mkdir(path.dirname(file), { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  await writeFile(partial, JSON.stringify(stored));
  await rename(partial, file);
}
