/**
 * Concept detection measured against concepts labelled by hand (test/fixtures/concepts): each
 * corpus is a folder of markdown pages and a `<corpus>.labels.json` naming, per page, the
 * concepts a reader would look up, each with its accepted names (`varroa mite|varroa`).
 *
 * A detected concept is right when its name or one of its aliases is, once normalised (case,
 * plurals, punctuation), one of a label's names. Precision: right detections over all
 * detections; recall: labels some detection names over all labels; both summed over the pages.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { normalisedName } from '../../src/consolidation/concept-names.js';
import { corpusWordsOf } from '../../src/consolidation/corpus-words.js';
import {
  type DetectedConcept,
  detectConcepts,
  detectionDefaults,
} from '../../src/consolidation/keyphrases.js';
import { type LoadedSource, sectionsOf } from '../../src/consolidation/sources.js';

export const conceptCorpora = path.resolve(import.meta.dirname, '../fixtures/concepts');

export interface LabelledCorpus {
  sources: LoadedSource[];
  /** Per source id (the file name): each label's normalised names. */
  labels: Map<string, Set<string>[]>;
}

export async function loadLabelledCorpus(name: string): Promise<LabelledCorpus> {
  const folder = path.join(conceptCorpora, name);
  const labelled = JSON.parse(await readFile(path.join(conceptCorpora, `${name}.labels.json`), 'utf8')) as {
    pages: Record<string, string[]>;
  };
  const sources: LoadedSource[] = [];
  for (const file of (await readdir(folder)).filter((file) => file.endsWith('.md')).sort()) {
    const markdown = await readFile(path.join(folder, file), 'utf8');
    const sections = sectionsOf(markdown);
    sources.push({
      source_id: file,
      key: `${name}/${file}`,
      title: sections.find((section) => section.heading_path.length > 0)?.heading_path[0] ?? file,
      url: null,
      markdown,
      sections,
    });
  }
  const labels = new Map(
    Object.entries(labelled.pages).map(([file, names]) => [
      file,
      names.map((label) => new Set(label.split('|').map((alternative) => normalisedName(alternative)))),
    ]),
  );
  return { sources, labels };
}

export interface PageScore {
  source_id: string;
  detected: string[];
  wrong: string[];
  missed: string[];
}

export interface CorpusScore {
  precision: number;
  recall: number;
  detected: number;
  right: number;
  labels: number;
  found: number;
  pages: PageScore[];
}

export function scoreDetections(
  corpus: LabelledCorpus,
  detect: (source: LoadedSource) => DetectedConcept[],
): CorpusScore {
  let detectedCount = 0;
  let right = 0;
  let labelCount = 0;
  let found = 0;
  const pages: PageScore[] = [];
  for (const source of corpus.sources) {
    // Pages without labels are there for the corpus's word counts only.
    const labels = corpus.labels.get(source.source_id);
    if (!labels) continue;
    const detected = detect(source);
    const namesOf = (concept: DetectedConcept) =>
      [concept.name, ...concept.aliases].map((name) => normalisedName(name));
    const matches = (concept: DetectedConcept, label: Set<string>) =>
      namesOf(concept).some((name) => label.has(name));
    const wrong = detected.filter((concept) => !labels.some((label) => matches(concept, label)));
    const missed = labels.filter((label) => !detected.some((concept) => matches(concept, label)));
    detectedCount += detected.length;
    right += detected.length - wrong.length;
    labelCount += labels.length;
    found += labels.length - missed.length;
    pages.push({
      source_id: source.source_id,
      detected: detected.map((concept) => concept.name),
      wrong: wrong.map((concept) => concept.name),
      missed: missed.map((label) => [...label][0] as string),
    });
  }
  return {
    precision: detectedCount === 0 ? 0 : right / detectedCount,
    recall: labelCount === 0 ? 0 : found / labelCount,
    detected: detectedCount,
    right,
    labels: labelCount,
    found,
    pages,
  };
}

/**
 * Offline detection as concept_detection runs it on a first run: its default number of concepts
 * per source (PER_SOURCE overrides it), words weighed by how many of the corpus's sources use them.
 */
export function offlineDetection(corpus: LabelledCorpus) {
  const words = corpusWordsOf(corpus.sources);
  return (source: LoadedSource) =>
    detectConcepts(source, {
      maxConcepts: Number(process.env.PER_SOURCE ?? detectionDefaults.maxConcepts),
      corpus: words,
    });
}
