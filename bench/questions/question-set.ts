/** The checks of bench/questions/check.ts, shared with the test that guards the committed set. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseQuestions, subsetFields } from '../../src/evaluation/questions.js';

const allowed: Record<(typeof subsetFields)[number], readonly string[]> = {
  style: ['keyword', 'paraphrase'],
  language: ['en', 'no'],
  // `blind`: the blind set (bench/questions/README.md), reported and never tuned on.
  split: ['dev', 'test', 'blind'],
};

export interface QuestionSetCheck {
  questions: number;
  counts: Record<string, Record<string, number>>;
  problems: string[];
}

/**
 * `corpus`: the directory the expected pages must exist in; undefined skips that check. A corpus
 * named but absent is a problem, not a smaller check: a fresh machine without the docs would
 * otherwise pass without looking at a single page.
 */
export function checkQuestionSet(text: string, corpus: string | undefined): QuestionSetCheck {
  const questions = parseQuestions(text);
  const problems: string[] = [];
  const counts: Record<string, Record<string, number>> = {};
  if (corpus !== undefined && !existsSync(corpus)) problems.push(`the corpus ${corpus} does not exist`);
  const checkPages = corpus !== undefined && existsSync(corpus);
  for (const question of questions) {
    for (const field of subsetFields) {
      const value = question[field];
      if (value === undefined || !allowed[field].includes(value)) {
        problems.push(`${question.id}: ${field} must be one of ${allowed[field].join(', ')}`);
      }
      const byValue = counts[field] ?? {};
      byValue[value ?? '(none)'] = (byValue[value ?? '(none)'] ?? 0) + 1;
      counts[field] = byValue;
    }
    if (!checkPages) continue;
    for (const page of question.expected) {
      if (!existsSync(path.join(corpus, page))) problems.push(`${question.id}: ${page} is not in ${corpus}`);
    }
  }
  return { questions: questions.length, counts, problems };
}
