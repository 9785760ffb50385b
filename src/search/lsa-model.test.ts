import { describe, expect, it } from 'vitest';
import {
  buildLsaModel,
  compareLsaSegments,
  foldIn,
  type LsaText,
  lsaRanking,
  questionTerms,
  termSegmentMatrix,
} from './lsa-model.js';

/** Three topics; `automobile` shares no word with the question "car", only neighbours. */
const latentCorpus: { name: string; text: string }[] = [
  { name: 'bread', text: 'Bake the bread in the oven; flour and yeast make the dough.' },
  { name: 'soil', text: 'Sow the seeds in garden soil and water them.' },
  { name: 'cars', text: 'The car has an engine, four wheels and a driver.' },
  { name: 'dough', text: 'Knead the dough of flour and water before you bake it.' },
  { name: 'plants', text: 'Plants grow from seeds when the soil has water.' },
  { name: 'garage', text: 'Park the car in the garage; the engine needs fuel.' },
  { name: 'cake', text: 'The oven bakes a cake of flour and sugar.' },
  { name: 'flowers', text: 'Flowers in the garden need water and good soil.' },
  { name: 'motoring', text: 'An automobile engine turns the wheels and burns fuel.' },
  { name: 'automobile', text: 'The automobile waits in the garage until the driver checks its wheels.' },
];

const texts: LsaText[] = latentCorpus.map((s) => ({ title: null, headings: [], text: s.text }));
const names = latentCorpus.map((s) => s.name);

describe('corpus LSA', () => {
  it('weighs (1 + ln tf) x idf over terms in two segments or more, rows at unit length, title and headings twice', () => {
    const m = termSegmentMatrix([
      { title: 'Engine', headings: [], text: 'engine engine fuel' },
      { title: null, headings: ['Fuel'], text: 'engine wheels' },
      { title: null, headings: [], text: 'wheels' },
    ]);
    // "engine" and "fuel" and "wheel" are each in two segments; nothing else is.
    expect([...m.terms.keys()]).toEqual(['engin', 'fuel', 'wheel']);
    expect(m.idf[0]).toBeCloseTo(Math.log(3 / 2), 12);
    const row = (r: number) => {
      const out = new Map<string, number>();
      const names = [...m.terms.keys()];
      for (let p = m.matrix.rowStart[r] as number; p < (m.matrix.rowStart[r + 1] as number); p++)
        out.set(names[m.matrix.cols[p] as number] as string, m.matrix.vals[p] as number);
      return out;
    };
    // Segment 0: engine 2 (text) + 2 (title) = 4, fuel 1: weights (1 + ln 4) and 1, times the same idf.
    const first = row(0);
    const norm = Math.hypot(1 + Math.log(4), 1);
    expect(first.get('engin')).toBeCloseTo((1 + Math.log(4)) / norm, 12);
    expect(first.get('fuel')).toBeCloseTo(1 / norm, 12);
    // Segment 1: the heading's "fuel" counts 2.
    expect(row(1).get('fuel')).toBeGreaterThan(row(1).get('engin') as number);
  });

  it('ranks a segment that shares no word with the question by the words around it', () => {
    const model = buildLsaModel(texts, 3);
    if (!model) throw new Error('no model');
    expect(latentCorpus[9]?.text).not.toMatch(/\bcars?\b/i);
    const ranked = lsaRanking(model, foldIn(model, questionTerms('car', [], [])), [], {
      depth: 4,
      feedbackWeight: 0.5,
    }).map((hit) => names[hit.segment]);
    expect(new Set(ranked)).toEqual(new Set(['cars', 'garage', 'motoring', 'automobile']));
  });

  it('folds in translations at their weight and expansions at 0.3', () => {
    const terms = questionTerms('the cars', [{ lexeme: 'engines', weight: 0.5 }], [{ lexeme: 'wheel' }]);
    expect(terms).toEqual(
      new Map([
        ['car', 1],
        ['engin', 0.5],
        ['wheel', 0.3],
      ]),
    );
  });

  it('pulls the question toward the feedback segments', () => {
    const model = buildLsaModel(texts, 3);
    if (!model) throw new Error('no model');
    const question = foldIn(model, questionTerms('water', [], []));
    const without = lsaRanking(model, question, [], { depth: 10, feedbackWeight: 0.5 });
    const bread = names.indexOf('bread');
    const withBread = lsaRanking(model, question, [bread], { depth: 10, feedbackWeight: 5 });
    const rankOf = (list: { segment: number }[]) => list.findIndex((hit) => hit.segment === bread);
    expect(rankOf(withBread)).toBeLessThan(rankOf(without));
  });

  it('keeps out what the filter excludes, and gives the same bits for the same corpus in any order of arrival', () => {
    const model = buildLsaModel(texts, 3);
    if (!model) throw new Error('no model');
    const ranked = lsaRanking(model, foldIn(model, questionTerms('car', [], [])), [], {
      depth: 10,
      feedbackWeight: 0.5,
      accept: (i) => i !== 2,
    });
    expect(ranked.map((hit) => hit.segment)).not.toContain(2);
    expect(ranked).toHaveLength(9);

    const keyed = latentCorpus.map((s, i) => ({
      source_key: `page-${s.name}`,
      segment_index: 0,
      segment_id: `id-${i}`,
      ...(texts[i] as LsaText),
    }));
    const shuffled = [...keyed].reverse().map((s, i) => ({ ...s, segment_id: `other-id-${i}` }));
    const a = buildLsaModel([...keyed].sort(compareLsaSegments), 3);
    const b = buildLsaModel([...shuffled].sort(compareLsaSegments), 3);
    expect(
      Buffer.from(a?.segmentVectors.buffer as ArrayBuffer).equals(
        Buffer.from(b?.segmentVectors.buffer as ArrayBuffer),
      ),
    ).toBe(true);
    expect(
      Buffer.from(a?.termVectors.buffer as ArrayBuffer).equals(
        Buffer.from(b?.termVectors.buffer as ArrayBuffer),
      ),
    ).toBe(true);
  });

  it('has no model when no term is in two segments', () => {
    expect(
      buildLsaModel([
        { title: null, headings: [], text: 'alpha' },
        { title: null, headings: [], text: 'beta' },
      ]),
    ).toBeUndefined();
  });
});
