/**
 * The worker side of eld-tables.ts: imports ELD's n-gram module (`eld/extrasmall`'s data,
 * about 31 MB as JavaScript objects), keeps the entries of the languages asked for, and sends
 * them back as typed arrays. The objects stay in this thread, whose memory goes when it ends.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { CompactNgramTable } from './eld-tables.js';

const port = parentPort;
if (!port) throw new Error('eld-tables-worker.ts runs as a worker thread only');
const { codes } = workerData as { codes: string[] };

interface NgramsData {
  type: string;
  languages: Record<string, string>;
  ngrams: Record<string, Record<string, number>>;
}

// The package exports only its entry files; the data module beside them is imported by URL.
const entry = import.meta.resolve('eld/extrasmall');
const { ngramsData } = (await import(new URL('../ngrams/extrasmall.js', entry).href)) as {
  ngramsData: NgramsData;
};
const wanted = new Set(
  Object.entries(ngramsData.languages)
    .filter(([, code]) => codes.includes(code))
    .map(([id]) => Number(id)),
);
const keys: string[] = [];
const starts: number[] = [0];
const languages: number[] = [];
const scores: number[] = [];
for (const [key, entries] of Object.entries(ngramsData.ngrams)) {
  const before = languages.length;
  for (const [id, score] of Object.entries(entries)) {
    if (!wanted.has(Number(id))) continue;
    // Uint8 holds ELD 2.1's ids (0-59) and scores (6-207); a table outside that fails here.
    if (!Number.isInteger(score) || score < 0 || score > 255) throw new Error(`ELD score ${score} of ${key}`);
    languages.push(Number(id));
    scores.push(score);
  }
  if (languages.length === before) continue;
  keys.push(key);
  starts.push(languages.length);
}
const table: CompactNgramTable = {
  entryUrl: entry,
  type: ngramsData.type,
  languageCodes: Object.entries(ngramsData.languages).reduce<string[]>((codesById, [id, code]) => {
    codesById[Number(id)] = code;
    return codesById;
  }, []),
  keys,
  starts: Uint32Array.from(starts),
  languages: Uint8Array.from(languages),
  scores: Uint8Array.from(scores),
};
port.postMessage(table, [table.starts.buffer, table.languages.buffer, table.scores.buffer] as ArrayBuffer[]);
