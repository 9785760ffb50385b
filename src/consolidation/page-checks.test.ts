import { describe, expect, it } from 'vitest';
import { checkPage, type PageFindingCode, pageFindingTitles, proseWords } from './page-checks.js';
import type { Passage } from './passages.js';

const passage = (citation: number, source: string): Passage => ({
  citation,
  source_id: source,
  key: `k/${source}.md`,
  title: source,
  url: null,
  heading_path: [],
  text: 'text',
});

const passages = [passage(1, 'a'), passage(2, 'b'), passage(3, 'c')];
const known = new Set(['vacuum', 'wal']);

const cleanPage = `# Autovacuum

Autovacuum runs VACUUM and ANALYZE in the background for tables that need it. [1] [2]

## Key points

- The launcher starts workers for tables with enough dead tuples. [2]
- Workers respect the cost limit so foreground queries keep their share of disk bandwidth. [3]

## Related concepts

- [VACUUM](vacuum.md)

## Sources

1. [a](k/a.md)
2. [b](k/b.md)
3. [c](k/c.md)
`;

const codesOf = (markdown: string, options = {}) =>
  checkPage(markdown, passages, known, options).map((finding) => finding.code);

describe('structural page checks', () => {
  it('finds nothing on a clean page', () => {
    expect(checkPage(cleanPage, passages, known)).toEqual([]);
  });

  const broken: Record<PageFindingCode, [string, Record<string, unknown>?]> = {
    K101: [cleanPage.replace('[3]\n', '[9]\n')],
    K102: [cleanPage.replace(' [2]\n- Workers', '\n- Workers')],
    K103: [cleanPage, { minWords: 500 }],
    K104: [cleanPage, { maxWords: 10 }],
    K105: [cleanPage.replace(/\[2\]/g, '[1]').replace(/\[3\]/g, '[1]')],
    K106: [cleanPage.replace('[3]\n', '[1] [1] [1] [1]\n'), { maxSourceShare: 0.5 }],
    K107: [cleanPage.replace('(vacuum.md)', '(checkpointer.md)')],
    K108: [cleanPage.replace('# Autovacuum', 'Autovacuum')],
    K109: [''],
  };

  for (const [code, [markdown, options]] of Object.entries(broken) as [
    PageFindingCode,
    [string, Record<string, unknown>?],
  ][]) {
    if (code === 'K109') continue; // the validator step's own finding: no page at all (test/knowledge-consolidation)
    it(`${code} fires on a page built to break it: ${pageFindingTitles[code]}`, () => {
      expect(codesOf(markdown, options)).toContain(code);
      expect(codesOf(cleanPage).filter((found) => found === code)).toEqual([]);
    });
  }

  it('reports a code in warn_only as a warning', () => {
    const findings = checkPage(cleanPage, passages, known, { minWords: 500, warnOnly: ['K103'] });
    expect(findings).toEqual([expect.objectContaining({ code: 'K103', severity: 'warning' })]);
  });

  it('does not count the Sources section links as concept links', () => {
    expect(codesOf(cleanPage.replace('(k/a.md)', '(unknown-concept.md)'))).toEqual([]);
  });

  it('counts prose words for min_words: citation markers, link targets and URLs are not words', () => {
    expect(proseWords('Autovacuum removes dead tuples [1] [2] [3, 4].')).toBe(4);
    expect(proseWords('See [the vacuum page](https://example.org/docs/routine-vacuuming.html) [1]')).toBe(4);
    // A page of three prose words padded with 40 citations and a link stays under min_words 20.
    const padded = `# Autovacuum\n\nIt removes tuples${' [1]'.repeat(40)} [see](https://example.org/a/b/c/d/e/f/g/h)\n`;
    expect(checkPage(padded, passages, known, { minWords: 20 }).map((finding) => finding.code)).toContain(
      'K103',
    );
  });
});
