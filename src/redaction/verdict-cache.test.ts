import { describe, expect, it } from 'vitest';
import { createVerdictCache } from './verdict-cache.js';

describe('createVerdictCache', () => {
  it('evicts the least recently used verdict once past its capacity', () => {
    const cache = createVerdictCache<string>(2);
    cache.set('a', 'allow');
    cache.set('b', 'block');
    expect(cache.get('a')).toBe('allow'); // a is now the most recent
    cache.set('c', 'allow');
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined(); // the least recent went
    expect(cache.get('a')).toBe('allow');
    expect(cache.get('c')).toBe('allow');
  });

  it('replaces a verdict set again without growing, and counts it as recent', () => {
    const cache = createVerdictCache<number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('a', 3);
    cache.set('c', 4);
    expect(cache.size).toBe(2);
    expect(cache.get('a')).toBe(3);
    expect(cache.get('b')).toBeUndefined();
  });
});
