/**
 * Which language a document, a segment or a query is written in, by ELD (the `eld` package:
 * character n-gram scores for 60 languages, no model download). Only the languages the index
 * has stemmers for are scored. Every decision needs a confidence margin, and text without one
 * keeps the fallback: the declared or configured language for a document, the document's
 * language for a segment, none for a query (then the index's languages decide).
 *
 * The detector's tables are loaded once, on first use (`loadLanguageDetector`: the build's
 * file, eld-prebuilt.ts, in milliseconds; else about a second on a worker), and detection itself is synchronous (~0.2 ms per 2,000 characters).
 * ELD's smallest table set (`eld/extrasmall`, about 50 MB resident as the package loads it,
 * against about 150 MB for `small`) labels every PostgreSQL page English, never overrides a
 * segment of them, and detects more of the question set's queries than `small` did (120/125
 * English, 27/30 Norwegian, none wrong). It is held as typed arrays of the scored languages
 * only (eld-tables.ts): 1.4 MB of heap instead of 28 MB, with the same results.
 */
import { type Eld, loadCompactEld } from './eld-tables.js';
import { isoCodeOf, type SearchLanguage, searchLanguages, toSearchLanguage } from './language.js';

export interface LanguageDetector {
  /** A document's language from its text; `fallback` when the text does not say confidently. */
  document(text: string, fallback: SearchLanguage): SearchLanguage;
  /**
   * A segment's language: its document's, unless the segment is long enough to tell and
   * confidently in another language (an English page quoting a Norwegian paragraph).
   */
  segment(text: string, documentLanguage: SearchLanguage): SearchLanguage;
  /** A query's language when at least two words make it confident; else undefined. */
  query(text: string, preferred?: readonly string[]): SearchLanguage | undefined;
  /**
   * The language a query of at least two words scores highest, with its lead over the best
   * language outside its group, confident or not: for callers with more evidence than the
   * n-grams (query-languages.ts weighs it against the index's vocabulary).
   */
  queryLead(text: string, preferred?: readonly string[]): QueryLead | undefined;
}

export interface QueryLead {
  language: SearchLanguage;
  /** Score lead over the best language outside the winner's group. */
  margin: number;
  /** That best language outside the winner's group, if ELD scored one. */
  runnerUp: SearchLanguage | undefined;
}

/** Thresholds, chosen on the PostgreSQL docs and the question set (docs/search-and-chat.md). */
export const detectionThresholds = {
  /** Characters read from a document or segment (detection costs per character). */
  sampleCharacters: 8000,
  segmentSampleCharacters: 2000,
  /** Letters a segment needs before it may override its document. */
  segmentMinimumLetters: 200,
  /** Score lead over the best language outside the winner's group. */
  documentMargin: 0.05,
  segmentMargin: 0.15,
  queryMargin: 0.08,
  /**
   * The lead a query needs when most of its words are unknown to the index in every other
   * language it holds (query-languages.ts); chosen on the dev questions (bench/questions/README.md).
   */
  vocabularyQueryMargin: 0.03,
};

/**
 * Languages n-grams barely separate: Norwegian bokmål and Danish share most of their spelling.
 * A lead is measured against the best language outside the winner's group, and within a
 * group the language the caller prefers (the index's, the document's) wins when it prefers
 * one of the group, else the group's first: Norwegian, the language of the users this service is built for (on the question set,
 * 5 of 30 Norwegian questions scored Danish first).
 */
const confusableGroups: readonly (readonly string[])[] = [['no', 'da']];

function groupOf(code: string): readonly string[] {
  return confusableGroups.find((group) => group.includes(code)) ?? [code];
}

let loading: Promise<LanguageDetector> | undefined;

/** The languages ELD scores: those the index has stemmers for (conversations/norwegian.ts shares them). */
export function eldLanguageCodes(): string[] {
  return searchLanguages.map((language) => isoCodeOf(language)).filter((code) => code !== undefined);
}

export function loadLanguageDetector(): Promise<LanguageDetector> {
  loading ??= loadCompactEld(eldLanguageCodes()).then(createLanguageDetector);
  return loading;
}

interface Verdict {
  code: string;
  /** Lead over the best language outside the winner's group. */
  margin: number;
  /** That language (ISO code), if ELD scored one. */
  runnerUp: string | undefined;
  scores: Record<string, number>;
  reliable: boolean;
}

function createLanguageDetector(eld: Eld): LanguageDetector {
  function judge(text: string, preferred: readonly string[] = []): Verdict | undefined {
    const result = eld.detect(text);
    if (!result.language) return undefined;
    const scores = result.getScores();
    const ranked = Object.entries(scores).sort((a, b) => b[1] - a[1]);
    const [top] = ranked;
    if (!top) return undefined;
    const group = groupOf(top[0]);
    const outside = ranked.find(([code]) => !group.includes(code));
    // One preferred language in the group decides; with several (an index holding Norwegian and
    // Danish copies of its pages), or none, the group's first does.
    const preferredInGroup = [...new Set(preferred.map(isoOf))].filter(
      (candidate) => candidate !== undefined && group.includes(candidate),
    );
    const code = (preferredInGroup.length === 1 ? preferredInGroup[0] : group[0]) ?? top[0];
    return {
      code,
      margin: top[1] - (outside?.[1] ?? 0),
      runnerUp: outside?.[0],
      scores,
      reliable: result.isReliable(),
    };
  }

  return {
    document(text, fallback) {
      const verdict = judge(text.slice(0, detectionThresholds.sampleCharacters), [fallback]);
      if (!verdict || !verdict.reliable || verdict.margin < detectionThresholds.documentMargin)
        return fallback;
      return toSearchLanguage(verdict.code) ?? fallback;
    },
    segment(text, documentLanguage) {
      const sample = text.slice(0, detectionThresholds.segmentSampleCharacters);
      if (!hasLetters(sample, detectionThresholds.segmentMinimumLetters)) return documentLanguage;
      const documentCode = isoCodeOf(documentLanguage);
      const verdict = judge(sample, documentCode ? [documentCode] : []);
      if (!verdict || !verdict.reliable || verdict.code === documentCode) return documentLanguage;
      // The segment must beat its document's language by the margin, not just any language.
      const lead =
        (verdict.scores[verdict.code] ?? 0) - (documentCode ? (verdict.scores[documentCode] ?? 0) : 0);
      if (Math.min(lead, verdict.margin) < detectionThresholds.segmentMargin) return documentLanguage;
      return toSearchLanguage(verdict.code) ?? documentLanguage;
    },
    query(text, preferred = []) {
      const lead = queryLead(text, preferred);
      return lead && lead.margin >= detectionThresholds.queryMargin ? lead.language : undefined;
    },
    queryLead,
  };

  function queryLead(text: string, preferred: readonly string[] = []): QueryLead | undefined {
    if ((text.match(/\p{L}{2,}/gu)?.length ?? 0) < 2) return undefined;
    const verdict = judge(text, preferred);
    const language = verdict && toSearchLanguage(verdict.code);
    if (!verdict || !language) return undefined;
    return { language, margin: verdict.margin, runnerUp: toSearchLanguage(verdict.runnerUp) };
  }
}

/** `norwegian` or `no` -> `no`. */
function isoOf(language: string): string | undefined {
  const searchLanguage = toSearchLanguage(language);
  return searchLanguage ? isoCodeOf(searchLanguage) : undefined;
}

/**
 * True when `text` holds at least `minimum` letters (code points of \p{L}), counted until the
 * minimum is reached: ingestion asks this of every segment, so it walks the code units
 * without allocating (a match per run of letters was 50 MB of garbage per bench:ingest run).
 * ASCII letters are decided by their code; any other code point by the same \p{L} class.
 */
function hasLetters(text: string, minimum: number): boolean {
  if (minimum <= 0) return true;
  let count = 0;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (unit < 0x80) {
      // Letters of ASCII are A-Z and a-z: setting bit 5 folds the first onto the second.
      const lower = unit | 0x20;
      if (lower >= 0x61 && lower <= 0x7a && ++count >= minimum) return true;
      continue;
    }
    const point = text.codePointAt(index) as number;
    if (point > 0xffff) index++;
    if (isLetter(point) && ++count >= minimum) return true;
  }
  return false;
}

const letter = /^\p{L}$/u;
/** Non-ASCII code points seen, by whether \p{L} holds: pages reuse the same few. */
const letterCache = new Map<number, boolean>();

function isLetter(point: number): boolean {
  let known = letterCache.get(point);
  if (known === undefined) {
    known = letter.test(String.fromCodePoint(point));
    if (letterCache.size < 4096) letterCache.set(point, known);
  }
  return known;
}
