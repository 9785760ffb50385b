import { describe, expect, it } from 'vitest';
import {
  distinctDocuments,
  firstRelevantRank,
  matchesEntry,
  meanMetrics,
  percentile,
  questionMetrics,
  relevance,
} from './metrics.js';

const page = (name: string, host = 'http://host/docs') => ({ url: `${host}/${name}`, object_key: null });
const file = (key: string) => ({ url: null, object_key: key });

describe('matchesEntry', () => {
  it('matches a page name at the end of the URL path, never part of a name', () => {
    expect(matchesEntry(page('routine-vacuuming.html'), 'routine-vacuuming.html')).toBe(true);
    expect(matchesEntry(page('not-routine-vacuuming.html'), 'routine-vacuuming.html')).toBe(false);
    expect(matchesEntry(page('routine-vacuuming.html'), 'docs/routine-vacuuming.html')).toBe(true);
    expect(matchesEntry(page('routine-vacuuming.html'), '/docs/routine-vacuuming.html')).toBe(true);
    expect(matchesEntry(page('routine-vacuuming.html'), 'vacuuming.html')).toBe(false);
  });

  it('matches the whole URL, ignoring a fragment and the query string for the path', () => {
    const url = 'http://host/docs/a.html';
    expect(matchesEntry({ url, object_key: null }, url)).toBe(true);
    expect(matchesEntry({ url: `${url}#section`, object_key: null }, url)).toBe(true);
    expect(matchesEntry({ url: `${url}?version=15`, object_key: null }, 'a.html')).toBe(true);
    expect(matchesEntry({ url, object_key: null }, 'http://other/docs/a.html')).toBe(false);
  });

  it('matches percent-encoded paths by their decoded name', () => {
    expect(matchesEntry(page('caf%C3%A9.html'), 'café.html')).toBe(true);
  });

  it('matches object keys whole or by their last parts', () => {
    const source = file('files/handbook/onboarding.md');
    expect(matchesEntry(source, 'files/handbook/onboarding.md')).toBe(true);
    expect(matchesEntry(source, 'onboarding.md')).toBe(true);
    expect(matchesEntry(source, 'handbook/onboarding.md')).toBe(true);
    expect(matchesEntry(source, 'boarding.md')).toBe(false);
    expect(matchesEntry(source, '  ')).toBe(false);
  });
});

describe('distinctDocuments', () => {
  it('keeps each document at its first occurrence, by URL without fragment, else object key', () => {
    const segments = [
      page('a.html'),
      page('a.html#part-2'),
      page('x.html'),
      file('k/notes.md'),
      page('a.html'),
      file('k/notes.md'),
    ];
    expect(distinctDocuments(segments)).toEqual([page('a.html'), page('x.html'), file('k/notes.md')]);
  });
});

describe('questionMetrics', () => {
  it('scores the first relevant document and every relevant one for nDCG (hand-computed)', () => {
    // Relevant at ranks 2 and 4 of two expected pages:
    // DCG = 1/log2(3) + 1/log2(5) = 0.630930 + 0.430677 = 1.061606
    // IDCG = 1/log2(2) + 1/log2(3) = 1.630930, nDCG = 0.650921
    const documents = [page('x.html'), page('a.html'), page('y.html'), page('b.html')];
    const metrics = questionMetrics(documents, ['a.html', 'b.html']);
    expect(metrics.hit_at_1).toBe(0);
    expect(metrics.hit_at_5).toBe(1);
    expect(metrics.hit_at_10).toBe(1);
    expect(metrics.mrr_at_10).toBe(0.5);
    expect(metrics.ndcg_at_10).toBeCloseTo(0.650921, 5);
  });

  it('gives 1 everywhere when the only expected page is first', () => {
    expect(questionMetrics([page('a.html'), page('x.html')], ['a.html'])).toEqual({
      hit_at_1: 1,
      hit_at_5: 1,
      hit_at_10: 1,
      mrr_at_10: 1,
      ndcg_at_10: 1,
    });
  });

  it('counts a hit at rank 6 for hit@10 only', () => {
    const documents = ['1', '2', '3', '4', '5', 'a', '7'].map((name) => page(`${name}.html`));
    const metrics = questionMetrics(documents, ['a.html', 'b.html', 'c.html']);
    expect(metrics).toMatchObject({ hit_at_1: 0, hit_at_5: 0, hit_at_10: 1 });
    expect(metrics.mrr_at_10).toBeCloseTo(1 / 6, 10);
    // DCG = 1/log2(7) = 0.356207; IDCG = 1 + 0.630930 + 0.5 = 2.130930; nDCG = 0.167160
    expect(metrics.ndcg_at_10).toBeCloseTo(0.16716, 5);
  });

  it('scores nothing beyond rank 10', () => {
    const documents = Array.from({ length: 10 }, (_, index) => page(`${index}.html`));
    documents.push(page('a.html'));
    expect(questionMetrics(documents, ['a.html'])).toEqual({
      hit_at_1: 0,
      hit_at_5: 0,
      hit_at_10: 0,
      mrr_at_10: 0,
      ndcg_at_10: 0,
    });
    expect(firstRelevantRank(documents, ['a.html'])).toBe(11);
    expect(firstRelevantRank(documents, ['b.html'])).toBeNull();
  });

  it('counts one expected entry once, even when two documents match it', () => {
    // The same page name on two hosts: only the first earns gain.
    const documents = [page('a.html', 'http://one'), page('a.html', 'http://two')];
    expect(relevance(documents, ['a.html'])).toEqual([0, -1]);
    expect(questionMetrics(documents, ['a.html']).ndcg_at_10).toBe(1);
  });

  it('scores zero with no results', () => {
    expect(questionMetrics([], ['a.html']).ndcg_at_10).toBe(0);
  });
});

describe('meanMetrics and percentile', () => {
  it('averages each metric', () => {
    const one = { hit_at_1: 1, hit_at_5: 1, hit_at_10: 1, mrr_at_10: 1, ndcg_at_10: 1 };
    const none = { hit_at_1: 0, hit_at_5: 0, hit_at_10: 1, mrr_at_10: 0.25, ndcg_at_10: 0.5 };
    expect(meanMetrics([one, none])).toEqual({
      hit_at_1: 0.5,
      hit_at_5: 0.5,
      hit_at_10: 1,
      mrr_at_10: 0.625,
      ndcg_at_10: 0.75,
    });
    expect(meanMetrics([]).hit_at_5).toBe(0);
  });

  it('takes the nearest-rank percentile', () => {
    const values = Array.from({ length: 100 }, (_, index) => 100 - index);
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 99)).toBe(99);
    expect(percentile([3, 1, 2], 50)).toBe(2);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBe(0);
  });
});
