import { describe, expect, it } from 'vitest';
import { findNulCharacters, NUL_KEYWORD } from './nul-characters.js';

const paths = (value: unknown, limit = 20) =>
  findNulCharacters(value, limit).map((error) => [error.instancePath, error.data]);

describe('findNulCharacters', () => {
  it('finds nothing in values without NUL', () => {
    expect(paths({ a: 'text', b: [1, null, true, { c: 'd' }], '': '' })).toEqual([]);
    expect(paths(null)).toEqual([]);
    expect(paths('plain')).toEqual([]);
  });

  it('names each string and key holding a NUL, in document order', () => {
    const value = { name: 'a\u0000', nested: { list: ['ok', 'b\u0000'], 'k\u0000ey': 1 }, 'x/y~': 'c\u0000' };
    expect(paths(value)).toEqual([
      ['/name', 'a\u0000'],
      ['/nested/list/1', 'b\u0000'],
      ['/nested/k\u0000ey', 'k\u0000ey'],
      ['/x~1y~0', 'c\u0000'],
    ]);
    expect(findNulCharacters('\u0000', 20)).toEqual([
      expect.objectContaining({ keyword: NUL_KEYWORD, instancePath: '', data: '\u0000' }),
    ]);
  });

  it('stops at the limit and walks values nested deeper than the call stack', () => {
    expect(
      paths(
        Array.from({ length: 100 }, () => '\u0000'),
        3,
      ),
    ).toHaveLength(3);
    let deep: unknown = '\u0000';
    for (let level = 0; level < 100_000; level++) deep = [deep];
    expect(paths(deep)).toHaveLength(1);
  });
});
