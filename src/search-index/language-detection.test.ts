import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { postgresDocs, skipWithoutPostgresDocs } from '../../test/helpers/corpus.js';
import { loadLanguageDetector } from './language-detection.js';

const english =
  'The planner chooses the cheapest plan for the query and then executes it. Statistics about the ' +
  'distribution of values in each column let it estimate how many rows every step returns.';
const norwegian =
  'Bilene kjørte hjem til byen, og det var ikke mye trafikk på veien. Vi stoppet ved en kafé og ' +
  'spiste middag før vi fortsatte videre mot fjellet, der hytta lå ved et lite vann. Om kvelden ' +
  'tente vi bål og snakket om alt som hadde skjedd i løpet av sommeren som nettopp var over.';

describe('language detection', () => {
  it('detects a document confidently and falls back when the text is too short to tell', async () => {
    const detector = await loadLanguageDetector();
    expect(detector.document(english, 'simple')).toBe('english');
    expect(detector.document(norwegian, 'english')).toBe('norwegian');
    expect(
      detector.document(
        'Der Planer wählt den günstigsten Plan und führt ihn dann aus, wie es sich gehört.',
        'simple',
      ),
    ).toBe('german');
    expect(detector.document('SELECT 1', 'english')).toBe('english');
    expect(detector.document('', 'simple')).toBe('simple');
  });

  it.skipIf(skipWithoutPostgresDocs('language detection on PostgreSQL pages'))(
    'labels real English reference pages English (the old detector said Portuguese for some)',
    async () => {
      const detector = await loadLanguageDetector();
      const directory = postgresDocs();
      // Pages the function-word counter labelled portuguese, italian or simple. A page missing
      // from the corpus fails the read: every one of them is checked.
      const pages = ['appendixes.html', 'tutorial-start.html', 'hash-index.html', 'ecpg-sql-var.html'];
      const labels: Record<string, string | undefined> = {};
      for (const page of pages) {
        const html = await readFile(`${directory}/${page}`, 'utf8');
        const text = html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
        labels[page] = detector.document(text, 'simple');
      }
      expect(labels).toEqual(Object.fromEntries(pages.map((page) => [page, 'english'])));
    },
  );

  it("labels this repository's own docs English", async () => {
    const detector = await loadLanguageDetector();
    const architecture = await readFile(new URL('../../docs/architecture.md', import.meta.url), 'utf8');
    expect(detector.document(architecture, 'simple')).toBe('english');
  });

  it('lets a segment override its document only when it is long and confidently different', async () => {
    const detector = await loadLanguageDetector();
    expect(detector.segment(norwegian, 'english')).toBe('norwegian');
    expect(detector.segment(english, 'english')).toBe('english');
    // Too short to overrule the document, whatever it looks like.
    expect(detector.segment('Hvordan går det?', 'english')).toBe('english');
    expect(detector.segment('autovacuum_naptime = 1min', 'english')).toBe('english');
  });

  it('detects a question but not a single word, and prefers the index language among Danish and Norwegian', async () => {
    const detector = await loadLanguageDetector();
    expect(detector.query('Hvordan sette opp replikering', ['english'])).toBe('norwegian');
    expect(detector.query('Hvordan lager jeg en delvis indeks i PostgreSQL?', ['english', 'norwegian'])).toBe(
      'norwegian',
    );
    // Scored Danish first; with no Danish in the index the group resolves to Norwegian.
    expect(detector.query('Hvordan skriver jeg en rekursiv spørring med WITH RECURSIVE?', ['english'])).toBe(
      'norwegian',
    );
    expect(detector.query('How do I run Weir on a PostgreSQL server?', ['english'])).toBe('english');
    expect(detector.query('webhook retry schedule', ['english'])).toBe('english');
    // One word says nothing reliable ("autovacuum" scores as Spanish).
    expect(detector.query('autovacuum', ['english'])).toBeUndefined();
  });
});
