import { describe, expect, it } from 'vitest';
import { parseQuestions, QuestionsError } from './questions.js';

describe('parseQuestions', () => {
  it('reads JSON Lines with labels, skipping blank and comment lines', () => {
    const text = [
      '# PostgreSQL docs',
      '{"id": "vacuum-1", "question": "How does autovacuum work?", "expected": ["routine-vacuuming.html"], "style": "keyword", "language": "en", "split": "dev"}',
      '',
      '{"question": "Hvordan fungerer autovacuum?", "expected": ["routine-vacuuming.html"], "language": "no"}',
    ].join('\n');
    expect(parseQuestions(text)).toEqual([
      {
        id: 'vacuum-1',
        question: 'How does autovacuum work?',
        expected: ['routine-vacuuming.html'],
        style: 'keyword',
        language: 'en',
        split: 'dev',
      },
      {
        id: 'q4',
        question: 'Hvordan fungerer autovacuum?',
        expected: ['routine-vacuuming.html'],
        style: undefined,
        language: 'no',
        split: undefined,
      },
    ]);
  });

  it('reads the older JSON array of {question, pages}', () => {
    const questions = parseQuestions(
      '[{"question": "What is MVCC?", "pages": ["mvcc-intro.html", "mvcc.html"]}, {"question": "x", "pages": ["y"]}]',
    );
    expect(questions.map((question) => [question.id, question.expected])).toEqual([
      ['q1', ['mvcc-intro.html', 'mvcc.html']],
      ['q2', ['y']],
    ]);
  });

  it('names the line of a bad question', () => {
    const parse = (text: string) => () => parseQuestions(text);
    expect(parse('{"question": "a", "expected": ["b"]}\nnot json')).toThrow(/^line 2: not JSON/);
    expect(parse('{"question": "", "expected": ["b"]}')).toThrow(
      'line 1: "question" must be a non-empty string',
    );
    expect(parse('{"question": "a", "expected": []}')).toThrow(/line 1: "expected" must be a non-empty list/);
    expect(parse('{"question": "a", "expected": ["b"], "style": 3}')).toThrow(
      'line 1: "style" must be a string',
    );
    expect(
      parse(
        '{"id": "x", "question": "a", "expected": ["b"]}\n{"id": "x", "question": "c", "expected": ["d"]}',
      ),
    ).toThrow('question id "x" appears twice');
    expect(parse('[{"question": "a"}]')).toThrow(QuestionsError);
  });
});
