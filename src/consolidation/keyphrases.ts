/**
 * Offline concept detection for one source: keyphrases in the manner of RAKE and YAKE, in
 * English and Norwegian. Candidates are the runs of words between stop words and punctuation
 * (up to three words), plus the title and headings; a candidate scores by how often it
 * occurs, where (title, headings, the opening section) and how many words it has. The
 * corpus-level choice (a phrase that every source uses is no concept) is the concept map's:
 * see concept-map.ts.
 *
 * Each concept keeps evidence: the heading path and the sentence it was found in.
 */
import { eng, nob } from 'stopword';
import { normalisedName, singular, slugOf, wordsOf } from './concept-names.js';
import { type CorpusWords, corpusShareOf, corpusWordDefaults } from './corpus-words.js';
import { cleanHeading, type LoadedSource } from './sources.js';
import { canEndName, phraseBreakWords, verbsOfSource } from './word-roles.js';

export interface ConceptEvidence {
  heading_path: string[];
  quote: string;
}

export interface DetectedConcept {
  slug: string;
  name: string;
  aliases: string[];
  /** 0..1 within the source (the best concept of the source has 1). */
  score: number;
  evidence: ConceptEvidence[];
}

export interface DetectionOptions {
  maxConcepts: number;
  maxWords: number;
  /** How many of the corpus's sources use each word (corpus-words.ts); absent, no weighing. */
  corpus?: CorpusWords | undefined;
}

/**
 * 16 concepts a source: with one-word noise gone, what sources share is their specific
 * phrases, and 8 a source left the map of Weir's 25 docs pages 9 concepts (16: 24).
 */
export const detectionDefaults: DetectionOptions = { maxConcepts: 16, maxWords: 3 };

/**
 * Words that end a candidate besides the stop word lists: documentation's own filler (see,
 * example, following), generic verbs and adjectives that RAKE would otherwise glue to nouns.
 */
const documentationFiller = `
  its it's itself i'm we're they're you're isn't aren't wasn't don't doesn't didn't won't can't
  so too very own off again further once here there when where why how both few nor than
  whereas although though unless until while whether thereby therein hence
  one's ones someone something anything everything nothing somewhere anywhere
  use used uses using usually also however therefore thus e.g i.e etc via per may might must can cannot
  need needs needed shall will would should could does done do make makes made give gives given get gets
  see shown show shows example examples following follows described describes describe section chapter
  introduction overview summary description details usage notes note fix fixes
  note notes page pages default new old first second last next previous one two three several various
  certain particular specific general simple possible available different same other others
  many much more most less least few every each any all some such own whether either neither
  already always never often sometimes instead rather just only even still yet now then
  true false null yes no not
  allow allows allowed enable enables provide provides provided contain contains containing include includes
  including specify specified specifies set sets setting return returns returned take takes taken
  run runs running create creates created change changes changed add adds added remove removes removed
  within without across along among around upon onto toward towards whose whom
  like unlike well way ways thing things part parts kind kinds type types form forms case cases
  value values number numbers name names time times item items list lists point points
  bruk brukes bruker brukt kan må skal vil følgende eksempel eksempler se side sider kapittel avsnitt
  første andre ny nye gammel gamle flere ulike samme annen annet hver hvert noen enhver
  også derfor altså dvs osv f.eks ofte alltid aldri bare fortsatt nå så da
  gjør gjøre gjort gir gi gitt får få fått lage lager laget
  eg ikkje ein eit dei dykk vere vart kva korleis kvifor kven berre fordi mellom
`;

const stopWords = new Set(
  [...eng, ...nob, ...documentationFiller.split(/\s+/), ...phraseBreakWords]
    .filter(Boolean)
    .map((word) => word.toLowerCase()),
);

export function isStopWord(word: string): boolean {
  return stopWords.has(word.toLowerCase());
}

interface Candidate {
  key: string;
  surfaces: Map<string, number>;
  words: number;
  count: number;
  /** Occurrences in the text (not in the title or headings). */
  textCount: number;
  inTitle: boolean;
  inHeading: boolean;
  inOpening: boolean;
  evidence: ConceptEvidence[];
  aliases: Set<string>;
}

/** Concepts of one source, best first. */
export function detectConcepts(
  source: LoadedSource,
  options: Partial<DetectionOptions> = {},
): DetectedConcept[] {
  const { maxConcepts, maxWords, corpus } = { ...detectionDefaults, ...options };
  const candidates = new Map<string, Candidate>();
  const candidate = (surface: string, words: number): Candidate => {
    const key = normalisedName(surface);
    let found = candidates.get(key);
    if (!found) {
      found = {
        key,
        surfaces: new Map(),
        words,
        count: 0,
        textCount: 0,
        inTitle: false,
        inHeading: false,
        inOpening: false,
        evidence: [],
        aliases: new Set(),
      };
      candidates.set(key, found);
    }
    found.surfaces.set(surface, (found.surfaces.get(surface) ?? 0) + 1);
    return found;
  };

  // The words this page uses as verbs ("holds", "moved", "puff the bellows") end phrases.
  const verbs = verbsOfSource(
    source.sections.flatMap((section) =>
      (section.prose ?? section.paragraphs).flatMap((paragraph) => sentencesOf(paragraph).map(wordsOf)),
    ),
  );
  const titlePhrase = headingPhrase(cleanHeading(source.title), maxWords + 2);
  if (titlePhrase) {
    const title = candidate(titlePhrase, wordsOf(titlePhrase).length);
    title.inTitle = true;
    title.count += 1;
  }
  source.sections.forEach((section, sectionIndex) => {
    const heading = section.heading_path[section.heading_path.length - 1];
    const phrase = heading ? headingPhrase(heading, maxWords + 2) : undefined;
    if (phrase) {
      const found = candidate(phrase, wordsOf(phrase).length);
      found.inHeading = true;
      found.count += 1;
      if (found.evidence.length === 0 && section.paragraphs[0])
        found.evidence.push({
          heading_path: section.heading_path,
          quote: quoteOf(sentencesOf(section.paragraphs[0])[0] ?? section.paragraphs[0]),
        });
    }
    section.paragraphs.forEach((paragraph, paragraphIndex) => {
      for (const { sentence, quote } of proseSentences(paragraph, section.prose?.[paragraphIndex])) {
        for (const [long, short] of acronymsIn(sentence)) {
          const found = candidate(long, wordsOf(long).length);
          found.aliases.add(short);
          candidate(short, 1).aliases.add(long);
        }
        for (const phrase of phrasesOf(sentence, maxWords, verbs)) {
          const found = candidate(phrase, wordsOf(phrase).length);
          found.count += 1;
          found.textCount += 1;
          if (sectionIndex <= 1) found.inOpening = true;
          if (
            found.evidence.length < 2 &&
            !found.evidence.some((item) => item.heading_path === section.heading_path)
          )
            found.evidence.push({ heading_path: section.heading_path, quote: quoteOf(quote) });
        }
      }
    });
  });

  // An acronym and its expansion are one concept: the expansion keeps the counts of both.
  for (const found of candidates.values()) {
    if (found.words !== 1) continue;
    for (const long of found.aliases) {
      const expansion = candidates.get(normalisedName(long));
      if (!expansion || expansion === found) continue;
      expansion.count += found.count;
      expansion.inTitle ||= found.inTitle;
      expansion.inHeading ||= found.inHeading;
      expansion.aliases.add(bestSurface(found));
      candidates.delete(found.key);
    }
  }

  dropSubsumed(candidates);
  const kept = [...candidates.values()].filter(
    (found) => found.inTitle || (found.inHeading ? found.textCount >= 1 : found.count >= 2),
  );
  // "box" beside "brood box", "cells" beside "queen cells": the head of a longer phrase the
  // page names is that phrase said short, or a word too general to look up alone.
  const heads = new Set(
    kept.filter((found) => found.words > 1).map((found) => found.key.slice(found.key.lastIndexOf(' ') + 1)),
  );
  const scored = kept
    .filter((found) => found.words > 1 || found.inTitle || found.inHeading || !heads.has(found.key))
    .map((found) => ({ found, score: scoreOf(found, corpus) }))
    .filter(({ score }) => score > 0)
    .sort((a, b) => b.score - a.score || a.found.key.localeCompare(b.found.key))
    .slice(0, maxConcepts);
  const best = scored[0]?.score ?? 1;
  return scored.map(({ found, score }) => {
    const name = bestSurface(found);
    return {
      slug: slugOf(name),
      name,
      aliases: [...found.aliases].filter((alias) => normalisedName(alias) !== found.key).sort(),
      score: Math.round((score / best) * 1000) / 1000,
      evidence: found.evidence,
    };
  });
}

/**
 * A phrase seen only inside a longer one ("slot" only in "replication slot") is that longer
 * phrase's part, not a concept of its own: it goes unless it also stands apart (more
 * occurrences than the longer phrase) or is a title or heading.
 */
function dropSubsumed(candidates: Map<string, Candidate>): void {
  const longer = [...candidates.values()].filter((found) => found.words > 1 && found.count >= 2);
  for (const found of [...candidates.values()]) {
    if (found.inTitle || found.inHeading) continue;
    const inner = ` ${found.key} `;
    if (
      longer.some(
        (other) =>
          other !== found &&
          other.words > found.words &&
          ` ${other.key} `.includes(inner) &&
          other.count >= found.count,
      )
    )
      candidates.delete(found.key);
  }
}

/**
 * Frequency, length, title, headings and the opening. A single word is weighed down by the share
 * of the corpus's sources using it, and one that nearly every source uses is none of this
 * source's concepts (0) unless it is the title: "bee" on a beekeeping corpus, "file" in docs.
 */
function scoreOf(found: Candidate, corpus: CorpusWords | undefined): number {
  const share = found.words === 1 && !found.inTitle ? corpusShareOf(corpus, found.key) : 0;
  if (share >= corpusWordDefaults.subjectShare) return 0;
  const score =
    Math.log2(1 + found.count) * (1 + 0.4 * (found.words - 1)) +
    (found.inTitle ? 4 : 0) +
    (found.inHeading ? 1.5 : 0) +
    (found.inOpening ? 0.5 : 0);
  return score * (1 - share);
}

/** The most frequent spelling; ties go to the one with capitals (a name as written). */
function bestSurface(found: Candidate): string {
  return [...found.surfaces.entries()].sort(
    (a, b) => b[1] - a[1] || capitals(b[0]) - capitals(a[0]) || a[0].localeCompare(b[0]),
  )[0]?.[0] as string;
}

function capitals(text: string): number {
  return (text.match(/\p{Lu}/gu) ?? []).length;
}

/** A heading as a concept name: short enough, not only stop words, not a question. */
function headingPhrase(heading: string, maxWords: number): string | undefined {
  const cleaned = heading
    .replace(/\s*\([^)]*\)\s*$/, '')
    .replace(/[:.?!]+$/, '')
    .trim();
  const words = wordsOf(cleaned);
  if (words.length === 0 || words.length > maxWords) return undefined;
  // "About the autovacuum" names autovacuum: leading stop words go.
  while (words.length > 1 && isStopWord(words[0] as string)) words.shift();
  if (words.every((word) => isStopWord(word) || /^\d+$/.test(word))) return undefined;
  return words.join(' ');
}

/**
 * Runs of content words between stop words, verbs of the page and punctuation, as
 * 1..maxWords-word phrases; a phrase ends on a word that can end a name (a noun, not an
 * adjective, colour or participle), and a general noun ("end", "day") is none alone.
 */
export function phrasesOf(
  sentence: string,
  maxWords: number,
  verbs: ReadonlySet<string> = new Set(),
): string[] {
  const phrases: string[] = [];
  for (const run of sentence.split(/[,;:()[\]{}"“”«»!?|/=<>]+|\s[-–—]\s|\.\s/)) {
    const words = wordsOf(run);
    let chunk: string[] = [];
    const flush = () => {
      for (let size = 1; size <= Math.min(maxWords, chunk.length); size++)
        for (let start = 0; start + size <= chunk.length; start++)
          if (canEndName(chunk[start + size - 1] as string, verbs))
            phrases.push(chunk.slice(start, start + size).join(' '));
      chunk = [];
    };
    for (const word of words) {
      if (isStopWord(word) || !isContentWord(word) || verbs.has(singular(word))) flush();
      else chunk.push(word);
    }
    flush();
  }
  return phrases;
}

/**
 * The sentences of a paragraph as detection reads them (`prose`, with code that names nothing
 * taken out) beside the sentence quoted as evidence (from the paragraph as written). When
 * taking the code out changed where sentences end, the quote is the written sentence that
 * holds most of the prose sentence's words.
 */
function proseSentences(paragraph: string, prose: string | undefined): { sentence: string; quote: string }[] {
  const written = sentencesOf(paragraph);
  if (prose === undefined) return written.map((sentence) => ({ sentence, quote: sentence }));
  const read = sentencesOf(prose);
  if (read.length === written.length)
    return read.map((sentence, index) => ({ sentence, quote: written[index] as string }));
  return read.map((sentence) => {
    const words = new Set(wordsOf(sentence).map((word) => word.toLowerCase()));
    let best = written[0] ?? sentence;
    let bestShared = -1;
    for (const candidate of written) {
      const shared = wordsOf(candidate).filter((word) => words.has(word.toLowerCase())).length;
      if (shared > bestShared) [best, bestShared] = [candidate, shared];
    }
    return { sentence, quote: best };
  });
}

function isContentWord(word: string): boolean {
  if (word.length < 2 || /^\d+([.,]\d+)*$/.test(word)) return false;
  // A possessive ("the file's web URL") belongs to the phrase after it, not a name of its own.
  if (/['’]s$/i.test(word)) return false;
  if (/ly$/.test(word) && word.length > 5 && word === word.toLowerCase()) return false;
  return singular(word).length >= 2;
}

const acronymPattern = /((?:[\p{Lu}][\p{L}-]+\s+){1,4}[\p{L}-]+)\s+\(([\p{Lu}][\p{Lu}\d]{1,7})\)/gu;

/** "Write-Ahead Logging (WAL)" -> ["Write-Ahead Logging", "WAL"] when the letters match. */
export function acronymsIn(sentence: string): [string, string][] {
  const found: [string, string][] = [];
  for (const match of sentence.matchAll(acronymPattern)) {
    const words = wordsOf(match[1] as string);
    const short = (match[2] as string).toUpperCase();
    for (let start = 0; start < words.length; start++) {
      const initials = words
        .slice(start)
        .flatMap((word) => word.split('-'))
        .map((part) => part[0]?.toUpperCase())
        .join('');
      if (initials === short) {
        found.push([words.slice(start).join(' '), match[2] as string]);
        break;
      }
    }
  }
  return found;
}

export function sentencesOf(paragraph: string): string[] {
  return paragraph
    .split(/\n+/)
    .flatMap((line) => line.split(/(?<=[.!?])\s+(?=[\p{Lu}\d"“(])/u))
    .map((sentence) => sentence.replace(/\s+/g, ' ').trim())
    .filter((sentence) => sentence.length > 0);
}

function quoteOf(sentence: string): string {
  return sentence.length <= 300 ? sentence : `${sentence.slice(0, 297).replace(/\s+\S*$/, '')}...`;
}
