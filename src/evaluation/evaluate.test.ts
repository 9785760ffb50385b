import { describe, expect, it } from 'vitest';
import { evaluateRetrieval, type Retrieve } from './evaluate.js';
import type { EvaluationQuestion } from './questions.js';

const questions: EvaluationQuestion[] = [
  { id: 'a', question: 'about a', expected: ['a.html'], style: 'keyword', language: 'en', split: 'dev' },
  { id: 'b', question: 'about b', expected: ['b.html'], style: 'paraphrase', language: 'no', split: 'test' },
];
const page = (name: string) => ({ url: `http://host/${name}`, object_key: null, title: name });

describe('evaluateRetrieval', () => {
  it('scores each mode over distinct documents, per subset, with misses and failures', async () => {
    const retrieve: Retrieve = async (mode, question) => {
      if (mode === 'broken') throw new Error('search unavailable');
      // "good" finds each page first (its segments twice); "poor" finds a, and b nowhere.
      if (mode === 'good')
        return { sources: [page(`${question.id}.html`), page(`${question.id}.html`)], took_ms: 2 };
      return {
        sources: question.id === 'a' ? [page('x.html'), page('a.html')] : [page('x.html'), page('y.html')],
      };
    };
    const report = await evaluateRetrieval({ questions, modes: ['good', 'poor', 'broken'], retrieve });
    expect(report.questions).toBe(2);
    const [good, poor, broken] = report.modes;
    expect(good?.metrics).toEqual({ hit_at_1: 1, hit_at_5: 1, hit_at_10: 1, mrr_at_10: 1, ndcg_at_10: 1 });
    expect(good?.server_ms?.p50).toBe(2);
    expect(good?.misses).toEqual([]);

    // a at rank 2: MRR 0.5, nDCG 1/log2(3) = 0.6309; b missed: the means halve them.
    expect(poor?.metrics).toEqual({
      hit_at_1: 0,
      hit_at_5: 0.5,
      hit_at_10: 0.5,
      mrr_at_10: 0.25,
      ndcg_at_10: 0.3155,
    });
    expect(poor?.server_ms).toBeNull();
    expect(
      poor?.subsets.map((subset) => [subset.field, subset.value, subset.questions, subset.metrics.hit_at_5]),
    ).toEqual([
      ['style', 'keyword', 1, 1],
      ['style', 'paraphrase', 1, 0],
      ['language', 'en', 1, 1],
      ['language', 'no', 1, 0],
      ['split', 'dev', 1, 1],
      ['split', 'test', 1, 0],
    ]);
    expect(poor?.misses).toEqual([
      {
        id: 'b',
        question: 'about b',
        expected: ['b.html'],
        expected_rank: null,
        returned: [
          { rank: 1, url: 'http://host/x.html', object_key: null, title: 'x.html' },
          { rank: 2, url: 'http://host/y.html', object_key: null, title: 'y.html' },
        ],
      },
    ]);

    expect(broken).toMatchObject({ failed: 2, misses: [], metrics: { hit_at_10: 0 } });
    expect(broken?.errors).toEqual([
      { id: 'a', question: 'about a', error: 'search unavailable' },
      { id: 'b', question: 'about b', error: 'search unavailable' },
    ]);
  });

  it('stops when the signal aborts', async () => {
    const abort = new AbortController();
    const retrieve: Retrieve = async () => {
      abort.abort(new Error('client went away'));
      return { sources: [] };
    };
    await expect(
      evaluateRetrieval({ questions, modes: ['any'], retrieve, signal: abort.signal }),
    ).rejects.toThrow('client went away');
  });
});
