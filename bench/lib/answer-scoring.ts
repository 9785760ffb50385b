/**
 * Question sets with gold answer facts (bench/questions/answers-*.jsonl) and how an answer is
 * scored against them: it passes when it contains any gold string, both lower-cased, with
 * whitespace collapsed and the markdown characters `` ` * | # `` removed (the rule the set
 * writers checked their gold strings against the pages with).
 */

export interface AnswerQuestion {
  id: string;
  question: string;
  expected: string[];
  gold: string[];
  kind: string;
  split: string;
}

export function parseAnswerQuestions(text: string, file: string): AnswerQuestion[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line, index) => {
      const question = JSON.parse(line) as Partial<AnswerQuestion>;
      if (
        typeof question.id !== 'string' ||
        typeof question.question !== 'string' ||
        !Array.isArray(question.gold) ||
        question.gold.length === 0
      )
        throw new Error(`${file}:${index + 1}: needs id, question and gold strings`);
      return {
        id: question.id,
        question: question.question,
        expected: question.expected ?? [],
        gold: question.gold,
        kind: question.kind ?? 'prose',
        split: question.split ?? 'dev',
      };
    });
}

export function normaliseForGold(text: string): string {
  return text
    .toLowerCase()
    .replace(/[`*|#]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The first gold string the answer contains, or undefined. */
export function matchedGold(answer: string, gold: readonly string[]): string | undefined {
  const normalised = normaliseForGold(answer);
  return gold.find((phrase) => normalised.includes(normaliseForGold(phrase)));
}

export interface AnswerOutcome {
  set: string;
  question: AnswerQuestion;
  answer: string;
  passed: boolean;
  ms: number;
}

export interface PassRate {
  label: string;
  passed: number;
  total: number;
}

/** Pass rates overall, per set, per split and per kind (and per set and split). */
export function passRates(outcomes: readonly AnswerOutcome[]): PassRate[] {
  const groups = new Map<string, AnswerOutcome[]>();
  const add = (label: string, outcome: AnswerOutcome) => {
    const list = groups.get(label) ?? [];
    list.push(outcome);
    groups.set(label, list);
  };
  for (const outcome of outcomes) {
    add('overall', outcome);
    add(`split ${outcome.question.split}`, outcome);
    add(`kind ${outcome.question.kind}`, outcome);
    add(`set ${outcome.set}`, outcome);
    add(`set ${outcome.set}, split ${outcome.question.split}`, outcome);
  }
  return [...groups].map(([label, list]) => ({
    label,
    passed: list.filter((outcome) => outcome.passed).length,
    total: list.length,
  }));
}

export function formatRate(rate: PassRate): string {
  const share = rate.total === 0 ? 0 : (100 * rate.passed) / rate.total;
  return `${rate.label}: ${rate.passed}/${rate.total} (${share.toFixed(1)}%)`;
}
