import { describe, expect, it } from 'vitest';
import { approximateTokens, tokenCounter } from './tokens.js';

describe('token counting', () => {
  it('counts the exact cl100k tokens with js-tiktoken', () => {
    const count = tokenCounter('cl100k');
    expect(count('hello world')).toBe(2);
    expect(count('')).toBe(0);
  });

  it('stays near cl100k on prose, code and markdown', () => {
    const exact = tokenCounter('cl100k');
    const samples = [
      'VACUUM reclaims storage occupied by dead tuples. In normal PostgreSQL operation, tuples that are deleted or obsoleted by an update are not physically removed from their table.',
      '```sql\nSELECT relname, n_dead_tup FROM pg_stat_user_tables WHERE n_dead_tup > 1000 ORDER BY 2 DESC;\n```',
      '| Option | Meaning |\n| --- | --- |\n| FULL | rewrites the table |\n\nSee [the manual](https://www.postgresql.org/docs/15/sql-vacuum.html).',
      'Dette er en norsk setning om biler og vær, skrevet for å teste tellingen av tegn som æ, ø og å.',
    ];
    for (const sample of samples) {
      const ratio = approximateTokens(sample) / exact(sample);
      expect(ratio, sample).toBeGreaterThan(0.75);
      expect(ratio, sample).toBeLessThan(1.3);
    }
  });

  it('is additive over blank-line joins (the segmenter sums block counts)', () => {
    const first = 'A paragraph with words.';
    const second = '```\ncode();\n```';
    expect(approximateTokens(`${first}\n\n${second}`)).toBe(
      approximateTokens(first) + approximateTokens(second) + 1,
    );
  });
});
