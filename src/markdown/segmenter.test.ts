import { describe, expect, it } from 'vitest';
import { parseBlocks, segmentMarkdown } from './segmenter.js';
import { approximateTokens } from './tokens.js';

const options = { maxTokens: 60, overlapTokens: 10, minTokens: 0, countTokens: approximateTokens };

function sentences(count: number, topic: string): string {
  return Array.from(
    { length: count },
    (_, index) => `Sentence ${index} talks about ${topic} in some detail.`,
  ).join(' ');
}

describe('segmentMarkdown', () => {
  it('splits at headings and records the heading path', () => {
    const markdown =
      '# Guide\n\nIntro text.\n\n## Install\n\nRun the installer.\n\n### Linux\n\nUse apt.\n\n## Usage\n\nStart it.';
    const segments = segmentMarkdown(markdown, options);
    expect(segments.map((segment) => segment.heading_path)).toEqual([
      ['Guide'],
      ['Guide', 'Install'],
      ['Guide', 'Install', 'Linux'],
      ['Guide', 'Usage'],
    ]);
    expect(segments[2]?.text).toBe('### Linux\n\nUse apt.');
  });

  it('keeps every segment within max_tokens, splitting long prose at sentences with overlap', () => {
    const markdown = `## Topic\n\n${sentences(40, 'vacuum')}`;
    const segments = segmentMarkdown(markdown, options);
    expect(segments.length).toBeGreaterThan(3);
    for (const segment of segments) {
      expect(segment.token_count).toBeLessThanOrEqual(60);
      expect(segment.token_count).toBe(approximateTokens(segment.text));
      expect(segment.heading_path).toEqual(['Topic']);
    }
    // The second segment starts with the closing sentence of the first.
    const lastSentence = /Sentence \d+ talks about vacuum in some detail\.$/.exec(
      segments[1 - 1]?.text ?? '',
    )?.[0];
    expect(lastSentence).toBeDefined();
    expect(segments[1]?.text.startsWith(lastSentence as string)).toBe(true);
  });

  it('keeps a code block whole when it fits, and re-fences the pieces of one that does not', () => {
    const small = '```sql\nSELECT 1;\nSELECT 2;\n```';
    const whole = segmentMarkdown(`Before.\n\n${small}\n\nAfter.`, { ...options, maxTokens: 200 });
    expect(whole).toHaveLength(1);
    expect(whole[0]?.text).toContain(small);
    const lines = Array.from({ length: 80 }, (_, index) => `SELECT column_${index} FROM some_table;`);
    const big = segmentMarkdown(`\`\`\`sql\n${lines.join('\n')}\n\`\`\``, options);
    expect(big.length).toBeGreaterThan(2);
    for (const segment of big) {
      expect(segment.text.startsWith('```sql\n')).toBe(true);
      expect(segment.text.endsWith('\n```')).toBe(true);
      expect(segment.token_count).toBeLessThanOrEqual(60);
    }
    expect(big.flatMap((segment) => segment.text.split('\n').slice(1, -1))).toEqual(lines);
  });

  it('repeats the table header in each piece of a large table', () => {
    const rows = Array.from({ length: 50 }, (_, index) => `| row ${index} | value ${index} |`);
    const segments = segmentMarkdown(`| Name | Value |\n| --- | --- |\n${rows.join('\n')}`, options);
    expect(segments.length).toBeGreaterThan(1);
    for (const segment of segments)
      expect(segment.text.startsWith('| Name | Value |\n| --- | --- |\n| row')).toBe(true);
  });

  it('merges segments under min_tokens within their section, never across a heading', () => {
    const siblings = '# A\n\nshort.\n\n# B\n\nalso short.\n\n# C\n\nthird.';
    const separate = segmentMarkdown(siblings, { ...options, minTokens: 20 });
    expect(separate.map((segment) => segment.heading_path)).toEqual([['A'], ['B'], ['C']]);
    // A parent whose own text is one line joins its first subsection, whose path names both.
    const nested = '# A\n\nintro.\n\n## A1\n\nshort.\n\n## A2\n\nalso short.\n\n# B\n\nthird.';
    const merged = segmentMarkdown(nested, { ...options, minTokens: 20 });
    expect(merged.map((segment) => segment.heading_path)).toEqual([['A', 'A1'], ['A', 'A2'], ['B']]);
    expect(merged[0]?.text).toBe('# A\n\nintro.\n\n## A1\n\nshort.');
  });

  it('keeps underscores and undoes escapes in heading_path', () => {
    const markdown =
      '# markdown\\_storage\\_writer\n\ntext\n\n## `smart_segmenter` and *emphasis*\n\ntext\n\n' +
      '## __Bold__ [link_name](https://a.example/x_y) snake_case_name \\*star\\*\n\ntext';
    expect(segmentMarkdown(markdown, options).map((segment) => segment.heading_path)).toEqual([
      ['markdown_storage_writer'],
      ['markdown_storage_writer', 'smart_segmenter and emphasis'],
      ['markdown_storage_writer', 'Bold link_name snake_case_name *star*'],
    ]);
  });

  it('cuts a single huge word and never loops', () => {
    const segments = segmentMarkdown('x'.repeat(5000), { ...options, overlapTokens: 0 });
    expect(segments.length).toBeGreaterThan(1);
    expect(segments.map((segment) => segment.text.replaceAll('\n\n', '')).join('')).toBe('x'.repeat(5000));
    for (const segment of segments) expect(segment.token_count).toBeLessThanOrEqual(60);
  });

  it('cuts a megabyte of base64 in linear time', () => {
    const cut = (bytes: number) => {
      const blob = Buffer.alloc(bytes, 'a1/+').toString('base64');
      const started = performance.now();
      const segments = segmentMarkdown(`# Data\n\n${blob}`, {
        ...options,
        maxTokens: 400,
        overlapTokens: 50,
      });
      return { segments, ms: performance.now() - started };
    };
    cut(100_000); // warms the code up, so the first timed cut is not the slow one
    const single = cut(750_000);
    const double = cut(1_500_000);
    for (const segment of double.segments) expect(segment.token_count).toBeLessThanOrEqual(400);
    // Twice the bytes, about twice the time: a ratio in the same run holds on a loaded machine,
    // where a fixed bound does not; a quadratic cut would give about 4.
    expect(Math.min(cut(1_500_000).ms, double.ms) / single.ms).toBeLessThan(3.2);
  });

  it('parses fenced code containing headings as code', () => {
    const blocks = parseBlocks('```md\n# not a heading\n| not | table |\n```\n# Real');
    expect(blocks.map((block) => block.kind)).toEqual(['code', 'heading']);
  });
});
