import { describe, expect, it } from 'vitest';
import {
  analyseQuery,
  candidateContext,
  type RerankCandidate,
  reorder,
  rerank,
  rerankDefaults,
  rerankFeatures,
  weightedFeatures,
} from './rerank.js';

const candidate = (overrides: Partial<RerankCandidate> & { segment_id: string }): RerankCandidate => ({
  document_id: overrides.segment_id,
  score: 1 / 61,
  keyword_raw: null,
  text: '',
  title: null,
  heading_path: [],
  segment_index: 3,
  ...overrides,
});

function features(query: string, subject: RerankCandidate, others: RerankCandidate[] = []) {
  return rerankFeatures(analyseQuery(query), subject, candidateContext([subject, ...others]));
}

describe('rerank features', () => {
  it('keeps content words, pairs of adjacent content words and names of the query, without stop words', () => {
    expect(analyseQuery('How do I restore a pg_dump archive with VACUUM afterwards?')).toEqual({
      terms: ['resto', 'pg_dump', 'archi', 'vacuu', 'after'],
      pairs: ['pg_dump archi', 'vacuu after'],
      names: ['pg_dump', 'vacuum'],
    });
  });

  it('proximity is 1 for the query words side by side and falls as they spread', () => {
    const near = candidate({ segment_id: 'a', text: 'Set work memory for each sort.' });
    const far = candidate({
      segment_id: 'b',
      text: 'Set work for the planner, then after several other settings comes memory.',
    });
    const proximityOf = (subject: RerankCandidate) => features('work memory', subject).proximity;
    expect(proximityOf(near)).toBe(1);
    expect(proximityOf(far)).toBeGreaterThan(0);
    expect(proximityOf(far)).toBeLessThan(0.2);
    expect(proximityOf(candidate({ segment_id: 'c', text: 'memory only' }))).toBe(0);
  });

  it('phrase counts the query pairs found adjacent in the text or a heading', () => {
    const text = candidate({ segment_id: 'a', text: 'A logical replication slot keeps WAL.' });
    const heading = candidate({ segment_id: 'b', heading_path: ['Replication slots'], text: 'keeps WAL' });
    const apart = candidate({ segment_id: 'c', text: 'a slot for replication' });
    expect(features('replication slot', text).phrase).toBe(1);
    expect(features('replication slot', heading).phrase).toBe(1);
    expect(features('replication slot', apart).phrase).toBe(0);
  });

  it('a name scores 1 in the title or a heading, 0.5 in the text only, 0 elsewhere', () => {
    const titled = candidate({ segment_id: 'a', title: 'pg_dump', text: 'extract a database' });
    const mentioned = candidate({ segment_id: 'b', title: 'Backup', text: 'run pg_dump nightly' });
    const missing = candidate({ segment_id: 'c', title: 'Backup', text: 'run pg_dumpall nightly' });
    expect(features('pg_dump options', titled).identifier).toBe(1);
    expect(features('pg_dump options', mentioned).identifier).toBe(0.5);
    expect(features('pg_dump options', missing).identifier).toBe(0);
  });

  it('heading agreement is the set cosine of the query words and the title and headings', () => {
    const same = candidate({ segment_id: 'a', title: 'Routine Vacuuming', heading_path: [] });
    const other = candidate({ segment_id: 'b', title: 'Client Authentication', heading_path: [] });
    expect(features('routine vacuuming', same).heading).toBeCloseTo(1, 6);
    expect(features('routine vacuuming', other).heading).toBe(0);
  });

  it('position favours a page opening, and page counts the segments of the same page', () => {
    const opening = candidate({ segment_id: 'a', segment_index: 0, document_id: 'd1' });
    const siblings = [1, 2, 3, 4].map((index) =>
      candidate({ segment_id: `s${index}`, segment_index: index, document_id: 'd1' }),
    );
    expect(features('x', opening).position).toBe(1);
    expect(features('x', candidate({ segment_id: 'b', segment_index: 3 })).position).toBe(0.25);
    expect(features('x', opening).page).toBe(0);
    expect(features('x', opening, siblings).page).toBe(1);
  });

  it('keyword is the BM25 score over the best candidate', () => {
    const best = candidate({ segment_id: 'a', keyword_raw: 8 });
    const half = candidate({ segment_id: 'b', keyword_raw: 4 });
    expect(features('x', half, [best]).keyword).toBe(0.5);
    expect(features('x', candidate({ segment_id: 'c' }), [best]).keyword).toBe(0);
  });
});

describe('rerank', () => {
  const weights = { keyword: 0, page: 0, proximity: 0, phrase: 0, identifier: 1, heading: 0, position: 0 };

  it('moves a candidate up by its weighted features, in units of a rank-1 RRF contribution', () => {
    const first = candidate({ segment_id: 'a', score: 1 / 61, text: 'dump and restore' });
    const second = candidate({ segment_id: 'b', score: 1 / 62, title: 'pg_dump' });
    const ranked = rerank('pg_dump', [first, second], { k: 60, weights });
    expect(ranked.map((entry) => entry.segment_id)).toEqual(['b', 'a']);
    expect(ranked[0]?.score).toBeCloseTo(1 / 62 + 1 / 61, 12);
  });

  it('computes only the features with a weight, and orders as with every feature computed', () => {
    const list = [
      candidate({ segment_id: 'a', score: 1 / 61, text: 'Set work memory for each sort.', segment_index: 0 }),
      candidate({ segment_id: 'b', score: 1 / 62, title: 'work_mem', heading_path: ['Work memory'] }),
      candidate({ segment_id: 'c', score: 1 / 63, text: 'work_mem and memory for work', keyword_raw: 3 }),
    ];
    const query = analyseQuery('work_mem work memory');
    const context = candidateContext(list);
    const computed = weightedFeatures(rerankDefaults.weights);
    const subject = list[1] as RerankCandidate;
    const partial = rerankFeatures(query, subject, context, computed);
    const full = rerankFeatures(query, subject, context);
    // Heading agreement and position are non-zero on this candidate, but have no default weight.
    expect(full.heading).toBeGreaterThan(0);
    expect(full.position).toBeGreaterThan(0);
    expect(partial).toEqual({ ...full, proximity: 0, heading: 0, position: 0 });
    const everything = list.map((entry) => rerankFeatures(query, entry, context));
    expect(rerank('work_mem work memory', list, { k: 60 })).toEqual(reorder(list, everything, { k: 60 }));
  });

  it('breaks equal scores by segment id and leaves candidates past the depth in their order', () => {
    const list = ['d', 'c', 'b', 'a'].map((id) => candidate({ segment_id: id }));
    const ranked = rerank('nothing matches', list, { k: 60, depth: 2, weights });
    expect(ranked.map((entry) => entry.segment_id)).toEqual(['c', 'd', 'b', 'a']);
  });
});
