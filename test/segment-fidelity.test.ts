/**
 * Segment fidelity on real pages: headings are hard boundaries (no segment carries a sibling
 * section filed under its own path) and heading_path keeps the heading's text, underscores
 * included. Pages: this repository's docs/ and the PostgreSQL documentation (postgresql-doc-15;
 * CI installs it, test/helpers/corpus.ts).
 */
import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { htmlToMarkdown } from '../src/markdown/html-to-markdown.js';
import { parseBlocks, plainHeading, type Segment, segmentMarkdown } from '../src/markdown/segmenter.js';
import { approximateTokens } from '../src/markdown/tokens.js';
import { postgresDocs, skipWithoutPostgresDocs } from './helpers/corpus.js';

// smart_segmenter's defaults.
const defaults = { maxTokens: 400, overlapTokens: 50, minTokens: 50, countTokens: approximateTokens };

/** Headings in a segment's text that its heading_path does not name: another section merged in. */
function foreignHeadings(segment: Segment): string[] {
  return parseBlocks(segment.text)
    .filter((block) => block.kind === 'heading')
    .map((block) => plainHeading(block.text))
    .filter((heading) => !segment.heading_path.includes(heading));
}

describe('segment fidelity on real pages', () => {
  it("files every section of this repository's docs under its own heading", async () => {
    const directory = new URL('../docs/', import.meta.url);
    const files = (await readdir(directory)).filter((name) => name.endsWith('.md'));
    expect(files.length).toBeGreaterThan(5);
    const paths = new Set<string>();
    for (const file of files) {
      const segments = segmentMarkdown(await readFile(new URL(file, directory), 'utf8'), defaults);
      for (const segment of segments) {
        expect(foreignHeadings(segment), `${file}: ${segment.heading_path.join(' > ')}`).toEqual([]);
        paths.add(segment.heading_path.join(' > '));
      }
    }
    expect(paths).toContain(
      'Markdown and Embedding adapters > markdown_storage_writer and StorageWriterConfig',
    );
    expect(paths).toContain('Markdown and Embedding adapters > smart_segmenter');
  });

  it('the smart_segmenter section of docs/markdown-adapters.md is not filed under sitemap_parser', async () => {
    const markdown = await readFile(new URL('../docs/markdown-adapters.md', import.meta.url), 'utf8');
    const segments = segmentMarkdown(markdown, defaults);
    const holding = segments.filter((segment) => segment.text.includes('## smart_segmenter'));
    expect(holding.map((segment) => segment.heading_path)).toEqual([
      ['Markdown and Embedding adapters', 'smart_segmenter'],
    ]);
  });

  it.skipIf(skipWithoutPostgresDocs('segment fidelity on PostgreSQL pages'))(
    'keeps PostgreSQL headings whole, underscores included',
    async () => {
      const corpus = postgresDocs();
      const files = (await readdir(corpus)).filter((name) => name.endsWith('.html')).sort();
      // Every 10th page, plus pages whose headings carry identifiers with underscores.
      const sample = [
        ...files.filter((_, index) => index % 10 === 0),
        'pgstatstatements.html',
        'runtime-config-autovacuum.html',
      ];
      const paths = new Set<string>();
      for (const file of sample) {
        const page = htmlToMarkdown(await readFile(`${corpus}/${file}`, 'utf8'), {
          url: `https://www.postgresql.org/docs/15/${file}`,
        });
        for (const segment of segmentMarkdown(page.markdown, defaults)) {
          expect(foreignHeadings(segment), `${file}: ${segment.heading_path.join(' > ')}`).toEqual([]);
          paths.add(segment.heading_path.at(-1) ?? '');
        }
      }
      expect(paths).toContain('F.32.1. The pg_stat_statements View');
      expect(paths).toContain('F.32.2. The pg_stat_statements_info View');
    },
  );
});
