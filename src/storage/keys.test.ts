import { describe, expect, it } from 'vitest';
import { keyProblem, keySegment } from './keys.js';

describe('keySegment', () => {
  it('makes any name a valid single key segment', () => {
    expect(keySegment('Årsrapport 2024 (final).pdf')).toBe('Årsrapport_2024_final_.pdf');
    expect(keySegment('../../etc/passwd')).toBe('_.._etc_passwd');
    expect(keySegment('...')).toBe('file');
    expect(keySegment('notes.meta.json')).toBe('notes.meta.json_');
    expect(keySegment('x'.repeat(500))).toHaveLength(120);
    for (const name of ['a/b', '..', 'x.meta.json', '\u0000', 'text-embedding-3-small']) {
      expect(keyProblem(`e/stage/${keySegment(name)}`)).toBeUndefined();
    }
  });
});
