/**
 * The questions a tuning bench may read: the dev split of the dev files (bench/questions/README.md
 * says which decision each informed). Test, fresh and blind questions never pass this filter.
 */
import { readFile } from 'node:fs/promises';
import { type EvaluationQuestion, parseQuestions } from '../../src/evaluation/questions.js';
import { abort } from './checks.js';

/** The main set (its dev split) and the second dev set, as the tuning benches read them. */
export const devQuestionFiles = [
  'bench/questions/postgres-docs.jsonl',
  'bench/questions/postgres-docs-dev2.jsonl',
];

export type DevQuestion = EvaluationQuestion & { /** The file's name, for per-file figures. */ file: string };

/** The dev-split questions of `files`, in file order. */
export async function readDevQuestions(files: readonly string[] = devQuestionFiles): Promise<DevQuestion[]> {
  const questions: DevQuestion[] = [];
  for (const file of files)
    for (const question of parseQuestions(await readFile(file, 'utf8')))
      if (question.split === 'dev') questions.push({ ...question, file: file.replace(/.*\//, '') });
  return questions;
}

/** The options every tuning bench takes (node:util parseArgs): the data dir and the question files. */
export const tuningBenchOptions = {
  reuse: { type: 'string' },
  questions: { type: 'string', multiple: true, default: devQuestionFiles },
} as const;

/** `--reuse`'s data dir; a tuning bench searches an ingested corpus and never ingests one. */
export function reusedDataDir(reuse: string | undefined): string {
  if (!reuse) abort('--reuse DATA_DIR is required (a data dir bench:quality filled)');
  return reuse;
}
