/**
 * ELD's detector (the `eld` package, 2.1.0, Apache-2.0, by Nito T.M.) over a compact copy of
 * its `extrasmall` n-gram table (issue 35). Imported as the package ships it, the table is
 * about 50,000 JavaScript objects, some 31 MB of the service's heap for as long as it runs.
 * Here a worker thread imports it, keeps the entries of the languages the index can stem
 * (about 22,000 n-grams) and sends them back as typed arrays: a Map from n-gram to row, and
 * each row's language ids and scores, about 2 MB.
 *
 * Scores of languages outside the subset never reach a result (ELD drops them before it picks
 * the best, `filterLangSubset`), so the pruned table gives the same results as ELD with that
 * subset set: eld-tables.test.ts compares the two on documents, segments and queries in many
 * languages. The text processing and scoring below follow ELD's `languageDetector.js`, which
 * the package does not export; its result class, separators and byte dictionary are ELD's own
 * modules, imported by URL beside its entry file.
 */
import { startModuleWorker } from '../runtime/module-worker.js';
import { prebuiltEldTableFile, readPrebuiltEldTable, writePrebuiltEldTable } from './eld-prebuilt.js';

/** The part of ELD's result the detectors read. */
export interface EldResult {
  language: string;
  getScores(): Record<string, number>;
  isReliable(): boolean;
}

export interface Eld {
  detect(text: string): EldResult;
}

/** What the worker sends (eld-tables-worker.ts). */
export interface CompactNgramTable {
  /** URL of ELD's `extrasmall` entry file: its other modules sit beside it. */
  entryUrl: string;
  type: string;
  /** ISO code by ELD's language id. */
  languageCodes: string[];
  /** N-gram of each row. */
  keys: string[];
  /** Row r's entries are starts[r] up to starts[r + 1] in `languages` and `scores`. */
  starts: Uint32Array;
  languages: Uint8Array;
  scores: Uint8Array;
}

type LanguageResultClass = new (
  language: string,
  results: number[],
  numNgrams: number,
  langCodes: Record<number, string> | string[],
) => EldResult;

const loading = new Map<string, Promise<Eld>>();

/** ELD restricted to `codes` (ISO 639-1), loaded once per subset. */
export function loadCompactEld(codes: readonly string[]): Promise<Eld> {
  const key = [...codes].sort().join(',');
  let eld = loading.get(key);
  if (!eld) {
    eld = readTable(codes).then(compactEld);
    loading.set(key, eld);
  }
  return eld;
}

/** The table the build wrote (eld-prebuilt.ts) when it matches the installed ELD, else built on a worker. */
async function readTable(codes: readonly string[]): Promise<CompactNgramTable> {
  return (await readPrebuiltEldTable(codes)) ?? buildTable(codes);
}

/**
 * For the build (scripts/build-eld-tables.mjs): writes the table of `codes` into dist/eld-tables/
 * unless a matching one is there. Returns its path.
 */
export async function prebuildEldTable(codes: readonly string[]): Promise<string> {
  if (!(await readPrebuiltEldTable(codes))) await writePrebuiltEldTable(await buildTable(codes), codes);
  return prebuiltEldTableFile;
}

/** ELD's n-gram module pruned to `codes` on a worker thread, whose memory goes when it ends. */
export function buildTable(codes: readonly string[]): Promise<CompactNgramTable> {
  const worker = startModuleWorker('search-index/eld-tables-worker', { workerData: { codes } });
  return new Promise((resolve, reject) => {
    worker.once('message', (table: CompactNgramTable) => {
      resolve(table);
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`ELD's tables did not load (exit code ${code})`)));
  });
}

/** ELD's own modules beside its entry file: the result class, the word separators, the byte dictionary. */
async function eldModules(entryUrl: string) {
  const [{ LanguageResult }, { separators }, { dictionary }] = await Promise.all([
    import(new URL('../LanguageResult.js', entryUrl).href) as Promise<{
      LanguageResult: LanguageResultClass;
    }>,
    import(new URL('../regexPatterns.js', entryUrl).href) as Promise<{ separators: RegExp }>,
    import(new URL('../dictionary.js', entryUrl).href) as Promise<{ dictionary: string[] }>,
  ]);
  return { LanguageResult, separators, dictionary };
}

/** ELD subtracts this from every stored score to keep its files small, and adds it back when scoring. */
const baseNgramScore = 53;

async function compactEld(table: CompactNgramTable): Promise<Eld> {
  const { LanguageResult, separators, dictionary } = await eldModules(table.entryUrl);
  const rows = new Map(table.keys.map((key, row) => [key, row] as const));
  const { starts, languages, scores, languageCodes } = table;
  const totals = new Float64Array(languageCodes.length);
  return {
    detect(input) {
      const text = input.substring(0, 1000);
      const words = utf8ByteWords(text.replace(separators, ' ').trim().toLowerCase(), dictionary);
      const ngrams = byteNgrams(words);
      totals.fill(0);
      for (const ngram of ngrams) {
        const row = rows.get(ngram);
        if (row === undefined) continue;
        for (let entry = starts[row] as number; entry < (starts[row + 1] as number); entry++) {
          const language = languages[entry] as number;
          totals[language] = (totals[language] as number) + (scores[entry] as number) + baseNgramScore;
        }
      }
      // ELD's subset filter keeps positive scores; for..in below walks the ids in ascending order.
      const results: number[] = [];
      totals.forEach((total, id) => {
        if (total > 0) results[id] = total;
      });
      const best = bestLanguage(results);
      if (best === undefined) return new LanguageResult('', [], 0, {});
      return new LanguageResult(languageCodes[best] as string, results, ngrams.size, languageCodes);
    },
  };
}

/** ELD's getMaxLang: the first id with the highest positive score. */
function bestLanguage(results: number[]): number | undefined {
  let best: number | undefined;
  let bestScore = 0;
  for (const id in results) {
    const score = results[id] as number;
    if (score > 0 && score > bestScore) {
      bestScore = score;
      best = Number(id);
    }
  }
  return best;
}

/**
 * ELD's strToUtf8Bytes: each word as its UTF-8 bytes, one dictionary character per byte above
 * ASCII, cut at the first space after 350 bytes or at any character after 380. A word of ASCII
 * only (most of them) is its own characters: taken as one substring of the text, not built
 * character by character (every segment is detected at ingestion).
 */
function utf8ByteWords(text: string, dictionary: readonly string[]): string[] {
  const byte = (value: number) => dictionary[value] as string;
  // The word so far: text[wordStart..index) while it is ASCII only, else `encoded`.
  let encoded = '';
  let wordStart = 0;
  let ascii = true;
  const words: string[] = [];
  let countBytes = 0;
  for (let index = 0; index < text.length; index++) {
    let charCode = text.charCodeAt(index);
    if (charCode < 0x80) {
      if (charCode === 32) {
        const word = ascii ? text.substring(wordStart, index) : encoded;
        if (word !== '') words.push(word);
        encoded = '';
        if (countBytes > 350) {
          ascii = false;
          break;
        }
        ascii = true;
        wordStart = index + 1;
      } else if (!ascii) {
        encoded += text[index];
      }
      countBytes++;
    } else {
      if (ascii) {
        encoded = text.substring(wordStart, index);
        ascii = false;
      }
      if (charCode < 0x800) {
        encoded += byte(0xc0 | (charCode >> 6)) + byte(0x80 | (charCode & 0x3f));
        countBytes += 2;
      } else if (charCode < 0xd800 || charCode >= 0xe000) {
        encoded +=
          byte(0xe0 | (charCode >> 12)) +
          byte(0x80 | ((charCode >> 6) & 0x3f)) +
          byte(0x80 | (charCode & 0x3f));
        countBytes += 3;
      } else {
        index++;
        charCode = 0x10000 + (((charCode & 0x3ff) << 10) | (text.charCodeAt(index) & 0x3ff));
        encoded +=
          byte(0xf0 | (charCode >> 18)) +
          byte(0x80 | ((charCode >> 12) & 0x3f)) +
          byte(0x80 | ((charCode >> 6) & 0x3f)) +
          byte(0x80 | (charCode & 0x3f));
        countBytes += 4;
      }
    }
    if (countBytes > 380) {
      // The word read so far ends here: the characters up to and including this one.
      if (ascii) encoded = text.substring(wordStart, index + 1);
      ascii = false;
      break;
    }
  }
  const last = ascii ? text.substring(wordStart) : encoded;
  if (last !== '') words.push(last);
  return words;
}

/** ELD's getByteNgrams: 4-byte n-grams at a stride of 3, a space marking a word's start and end. */
function byteNgrams(words: readonly string[]): Set<string> {
  const ngrams = new Set<string>();
  for (const word of words) {
    const length = Math.min(word.length, 70);
    let start = 0;
    for (; start + 4 < length; start += 3)
      ngrams.add(`${start === 0 ? ' ' : ''}${word.substring(start, start + 4)}`);
    ngrams.add(`${start === 0 ? ' ' : ''}${word.substring(length !== 3 ? length - 4 : 0)} `);
  }
  return ngrams;
}
