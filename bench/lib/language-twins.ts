/**
 * bench:quality over a corpus that holds its pages in several languages, one folder per
 * language (the GIMP manual: `en/`, `nn/`, `da/`, `sv/`, 685 same-named pages each):
 *
 * - the "twin check" (issue 34: a question in one language gets the page in that language
 *   before its translations, when both are indexed): for each question whose expected page
 *   exists in its own language's folder, is the first copy of an expected page among the
 *   results the one in that folder? A copy's language is its folder's, read by the service's
 *   own rule (src/search/language-preference.ts `pageCopy`), so `nn/` counts as Norwegian and
 *   a `da/` page that still holds English text counts as Danish;
 * - the figures per split, language and style together (dev/no/paraphrase...), from the
 *   results each mode returned, recorded once while the evaluation ran.
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Retrieve } from '../../src/evaluation/evaluate.js';
import {
  distinctDocuments,
  type Metrics,
  matchesEntry,
  meanMetrics,
  questionMetrics,
  type ResultSource,
} from '../../src/evaluation/metrics.js';
import type { EvaluationQuestion } from '../../src/evaluation/questions.js';
import { pageCopy, type SearchLanguage, toSearchLanguage } from '../../src/search-index/language.js';

/** Per mode, per question id: the distinct documents returned, in rank order. */
export type RecordedResults = Map<string, Map<string, ResultSource[]>>;

/** `retrieve`, keeping what each (mode, question) returned in `recorded`. */
export function recordingRetrieve(retrieve: Retrieve, recorded: RecordedResults): Retrieve {
  return async (mode, question, signal) => {
    const retrieved = await retrieve(mode, question, signal);
    const byQuestion = recorded.get(mode) ?? new Map<string, ResultSource[]>();
    byQuestion.set(question.id, distinctDocuments(retrieved.sources));
    recorded.set(mode, byQuestion);
    return retrieved;
  };
}

/** The corpus's language folders (top-level folders named by a language code), by language. */
export async function languageFolders(corpus: string): Promise<Map<SearchLanguage, string[]>> {
  const folders = new Map<SearchLanguage, string[]>();
  const entries = await readdir(corpus, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    const language = pageCopy(`/${entry.name}/page.html`)?.language;
    if (language) folders.set(language, [...(folders.get(language) ?? []), entry.name]);
  }
  return folders;
}

export interface TwinFigures {
  mode: string;
  /** Questions whose expected page exists in their own language's folder. */
  eligible: number;
  /** Of those, with a copy of an expected page among the results. */
  found: number;
  ownFirst: number;
  /** The first copy returned is another language's, and the own copy comes later. */
  wrongFirstOwnLater: number;
  /** The first copy returned is another language's, and the own copy is not returned. */
  wrongFirstOwnAbsent: number;
  /** Folder of the first copy, for the wrong-language-first questions. */
  wrongFolders: Record<string, number>;
  wrongIds: string[];
}

/**
 * The twin check for one mode. `swapLanguage` (BENCH_BREAK=twin-language) checks each question
 * against another language's folder than its own, so the check must fail.
 */
export function twinCheck(options: {
  mode: string;
  questions: readonly EvaluationQuestion[];
  recorded: RecordedResults;
  corpus: string;
  folders: Map<SearchLanguage, string[]>;
  swapLanguage?: boolean;
}): TwinFigures {
  const languages = [...options.folders.keys()];
  const figures: TwinFigures = {
    mode: options.mode,
    eligible: 0,
    found: 0,
    ownFirst: 0,
    wrongFirstOwnLater: 0,
    wrongFirstOwnAbsent: 0,
    wrongFolders: {},
    wrongIds: [],
  };
  for (const question of options.questions) {
    let language = toSearchLanguage(question.language);
    if (language && options.swapLanguage) language = languages.find((other) => other !== language);
    const own = language ? (options.folders.get(language) ?? []) : [];
    const exists = own.some((folder) =>
      question.expected.some((entry) => existsSync(path.join(options.corpus, folder, entry))),
    );
    if (!exists) continue;
    figures.eligible++;
    const copies = (options.recorded.get(options.mode)?.get(question.id) ?? []).filter((document) =>
      question.expected.some((entry) => matchesEntry(document, entry)),
    );
    const first = copies[0];
    if (!first) continue;
    figures.found++;
    const languageOf = (document: ResultSource) => pageCopy(document.url ?? document.object_key ?? '');
    if (languageOf(first)?.language === language) {
      figures.ownFirst++;
      continue;
    }
    const folder = folderOf(first.url ?? first.object_key ?? '');
    figures.wrongFolders[folder] = (figures.wrongFolders[folder] ?? 0) + 1;
    figures.wrongIds.push(question.id);
    if (copies.some((copy) => languageOf(copy)?.language === language)) figures.wrongFirstOwnLater++;
    else figures.wrongFirstOwnAbsent++;
  }
  return figures;
}

function folderOf(address: string): string {
  const parts = address.split(/[?#]/)[0]?.split('/') ?? [];
  return parts.at(-2) ?? '?';
}

export function formatTwins(rows: readonly TwinFigures[]): string {
  const lines = [
    '| mode | eligible | found | own language first | share | wrong first (own later / own absent) | first copies wrong, by folder | questions |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const row of rows) {
    const wrong = row.wrongFirstOwnLater + row.wrongFirstOwnAbsent;
    const folders = Object.entries(row.wrongFolders)
      .map(([folder, count]) => `${folder} ${count}`)
      .join(', ');
    lines.push(
      `| ${row.mode} | ${row.eligible} | ${row.found} | ${row.ownFirst} | ${
        row.found > 0 ? (row.ownFirst / row.found).toFixed(3) : '-'
      } | ${wrong} (${row.wrongFirstOwnLater} / ${row.wrongFirstOwnAbsent}) | ${folders || '-'} | ${
        row.wrongIds.join(' ') || '-'
      } |`,
    );
  }
  return lines.join('\n');
}

/** The label of a question's cell: split, language and style together. */
function cellOf(question: EvaluationQuestion): string {
  return [question.split ?? '-', question.language ?? '-', question.style ?? '-'].join(' / ');
}

/**
 * hit@5 and MRR@10 per cell (split / language / style) for each mode, from the recorded
 * results; "best bm25" is the better of `baselines` in each cell (hit@5, then MRR@10).
 */
export function formatCells(options: {
  questions: readonly EvaluationQuestion[];
  recorded: RecordedResults;
  modes: readonly string[];
  baselines: readonly string[];
}): string {
  const cells = new Map<string, EvaluationQuestion[]>();
  for (const question of options.questions) {
    const key = cellOf(question);
    cells.set(key, [...(cells.get(key) ?? []), question]);
  }
  const figures = (mode: string, questions: readonly EvaluationQuestion[]): Metrics =>
    meanMetrics(
      questions.map((question) =>
        questionMetrics(options.recorded.get(mode)?.get(question.id) ?? [], question.expected),
      ),
    );
  const pair = (metrics: Metrics) => `${metrics.hit_at_5.toFixed(3)} / ${metrics.mrr_at_10.toFixed(3)}`;
  const lines = [
    `| split / language / style | questions | ${options.modes.join(' | ')} | best bm25 |`,
    `|---|---|${options.modes.map(() => '---|').join('')}---|`,
  ];
  for (const [cell, questions] of [...cells.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const best = options.baselines
      .map((mode) => figures(mode, questions))
      .reduce<Metrics | undefined>(
        (better, metrics) =>
          !better ||
          metrics.hit_at_5 > better.hit_at_5 ||
          (metrics.hit_at_5 === better.hit_at_5 && metrics.mrr_at_10 > better.mrr_at_10)
            ? metrics
            : better,
        undefined,
      );
    lines.push(
      `| ${cell} | ${questions.length} | ${options.modes
        .map((mode) => pair(figures(mode, questions)))
        .join(' | ')} | ${best ? pair(best) : '-'} |`,
    );
  }
  return `hit@5 / MRR@10 per cell\n\n${lines.join('\n')}`;
}
