import { describe, expect, it } from 'vitest';
import { isoCodeOf, toSearchLanguage } from './language.js';

describe('toSearchLanguage', () => {
  it('accepts ISO codes, regional tags and configuration names', () => {
    expect(toSearchLanguage('en')).toBe('english');
    expect(toSearchLanguage('nb-NO')).toBe('norwegian');
    expect(toSearchLanguage('nn')).toBe('norwegian');
    expect(toSearchLanguage('Norwegian')).toBe('norwegian');
    expect(toSearchLanguage('klingon')).toBeUndefined();
    expect(toSearchLanguage(undefined)).toBeUndefined();
    expect(isoCodeOf('norwegian')).toBe('no');
  });
});
