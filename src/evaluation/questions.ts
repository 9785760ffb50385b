/**
 * Evaluation questions: JSON Lines, one question per line,
 *   {"id": "vacuum-1", "question": "...", "expected": ["routine-vacuuming.html"],
 *    "style": "keyword", "language": "en", "split": "dev"}
 * (`id` optional, default the line number as `q<n>`; `style`, `language` and `split` optional
 * labels that the report breaks figures down by). Blank lines and lines starting with `#` or
 * `//` are skipped. The older JSON array of `{"question", "pages"}` objects is read too.
 */

export interface EvaluationQuestion {
  id: string;
  question: string;
  /** URLs, object keys, or their last path parts ("routine-vacuuming.html"). */
  expected: string[];
  style?: string | undefined;
  language?: string | undefined;
  split?: string | undefined;
}

/** The labels a report breaks its figures down by, in this order. */
export const subsetFields = ['style', 'language', 'split'] as const;
export type SubsetField = (typeof subsetFields)[number];

export class QuestionsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'QuestionsError';
  }
}

/** Parses a questions file (JSONL, or the older JSON array); throws QuestionsError naming the line. */
export function parseQuestions(text: string): EvaluationQuestion[] {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch (error) {
      throw new QuestionsError(`not a JSON array: ${(error as Error).message}`);
    }
    if (!Array.isArray(parsed)) throw new QuestionsError('expected a JSON array of questions');
    return requireUniqueIds(
      parsed.map((item, index) => toQuestion(item, `item ${index + 1}`, `q${index + 1}`)),
    );
  }
  const questions: EvaluationQuestion[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    const content = line.trim();
    if (content.length === 0 || content.startsWith('#') || content.startsWith('//')) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(content);
    } catch (error) {
      throw new QuestionsError(`line ${index + 1}: not JSON: ${(error as Error).message}`);
    }
    questions.push(toQuestion(parsed, `line ${index + 1}`, `q${index + 1}`));
  });
  return requireUniqueIds(questions);
}

/** One question from a parsed JSON value (both formats; `pages` is the older name of `expected`). */
export function toQuestion(value: unknown, where: string, defaultId: string): EvaluationQuestion {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new QuestionsError(`${where}: expected an object`);
  }
  const record = value as Record<string, unknown>;
  const question = record.question;
  if (typeof question !== 'string' || question.trim().length === 0) {
    throw new QuestionsError(`${where}: "question" must be a non-empty string`);
  }
  const expected = record.expected ?? record.pages;
  if (
    !Array.isArray(expected) ||
    expected.length === 0 ||
    !expected.every((entry) => typeof entry === 'string' && entry.trim().length > 0)
  ) {
    throw new QuestionsError(
      `${where}: "expected" must be a non-empty list of URLs, object keys or page names`,
    );
  }
  const label = (name: string): string | undefined => {
    const field = record[name];
    if (field === undefined || field === null) return undefined;
    if (typeof field !== 'string') throw new QuestionsError(`${where}: "${name}" must be a string`);
    return field;
  };
  const id = record.id === undefined ? defaultId : record.id;
  if (typeof id !== 'string' && typeof id !== 'number') {
    throw new QuestionsError(`${where}: "id" must be a string or a number`);
  }
  return {
    id: String(id),
    question,
    expected: expected as string[],
    style: label('style'),
    language: label('language'),
    split: label('split'),
  };
}

/** The questions, or a QuestionsError naming an id given twice. */
export function requireUniqueIds(questions: EvaluationQuestion[]): EvaluationQuestion[] {
  const seen = new Set<string>();
  for (const question of questions) {
    if (seen.has(question.id))
      throw new QuestionsError(`question id ${JSON.stringify(question.id)} appears twice`);
    seen.add(question.id);
  }
  return questions;
}
