import { describe, expect, it } from 'vitest';
import type { SearchLanguage } from '../search-index/language.js';
import type { QueryTranslator } from './query-translation.js';
import { expandsQuery, searchDefaults, searchSettings, translatorFor } from './search-request.js';

describe('searchSettings', () => {
  it('gives a single ranking as many candidates as it returns, and a fused one at least as many', () => {
    const request = { query: 'q', limit: 80, candidate_depth: { keyword: 20, vector: 200 } };
    expect(searchSettings('keyword', request).depth).toEqual({ keyword: 80, vector: 200 });
    expect(searchSettings('vector', request).depth).toEqual({ keyword: 80, vector: 80 });
    expect(searchSettings('rrf', request).depth).toEqual({ keyword: 80, vector: 200 });
  });

  it('fills in the defaults of limit, k, weights and depths', () => {
    expect(searchSettings('rrf', { query: 'q' })).toEqual({
      limit: searchDefaults.limit,
      k: searchDefaults.k,
      weights: { keyword: searchDefaults.weight, vector: searchDefaults.weight },
      depth: { keyword: searchDefaults.depth, vector: searchDefaults.depth },
    });
  });
});

describe('query rewrites', () => {
  const english = { languages: ['english'], queryLanguage: undefined };
  it('expands only an English (or undetected) query over an index with English, in match any', () => {
    expect(expandsQuery(english, 'any', { query: 'q' })).toBe(true);
    expect(expandsQuery(english, 'all', { query: 'q' })).toBe(false);
    expect(expandsQuery(english, 'any', { query: 'q', expand: false })).toBe(false);
    expect(
      expandsQuery({ languages: ['norwegian', 'english'], queryLanguage: 'norwegian' }, 'any', {
        query: 'q',
      }),
    ).toBe(false);
    expect(expandsQuery({ languages: ['norwegian'], queryLanguage: undefined }, 'any', { query: 'q' })).toBe(
      false,
    );
  });

  it('picks the glossary from the query language into a language searched', () => {
    const glossary = (from: SearchLanguage, to: SearchLanguage): QueryTranslator => ({
      from,
      to,
      translate: async () => ({ translations: [], untranslated: '' }),
    });
    const noToEn = glossary('norwegian', 'english');
    const daToEn = glossary('danish', 'english');
    const languages = { languages: ['norwegian', 'english'], queryLanguage: 'norwegian' };
    expect(translatorFor([daToEn, noToEn], languages, 'any', { query: 'q' })).toBe(noToEn);
    expect(
      translatorFor([daToEn, noToEn], languages, 'any', { query: 'q', translate: false }),
    ).toBeUndefined();
    expect(translatorFor([daToEn, noToEn], languages, 'all', { query: 'q' })).toBeUndefined();
    expect(
      translatorFor([noToEn], { languages: ['norwegian'], queryLanguage: 'norwegian' }, 'any', {
        query: 'q',
      }),
    ).toBeUndefined();
  });
});
