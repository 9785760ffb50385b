/**
 * Cross-language keyword search (src/search/query-translation.ts) on each database: a
 * Norwegian question over English pages is searched with its glossary translations.
 */
import { uuidv7 } from 'uuidv7';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.js';
import {
  builtInGlossaries,
  createQueryTranslator,
  loadGlossary,
  parseGlossary,
} from '../src/search/query-translation.js';
import { createSearchService, type SearchService } from '../src/search/search-service.js';
import { createKnowledgeIndex } from '../src/search-index/knowledge-index.js';
import { databaseTargets } from './helpers/databases.js';

const pages = [
  {
    url: 'https://docs.example.org/create-index',
    title: 'CREATE INDEX',
    text: 'Building an index concurrently does not block writes to the table while the index is built.',
  },
  {
    // "lager" is an English word too: the Norwegian "lager" (makes) must not land here.
    url: 'https://docs.example.org/brewing',
    title: 'Brewing',
    text: 'A lager is fermented cold; this page explains lager yeast, lager tanks and bottom fermentation.',
  },
  {
    url: 'https://docs.example.org/upgrading',
    title: 'Upgrading a Cluster',
    text: 'Moving to a new major version needs pg_upgrade or a dump and restore of the data.',
  },
  {
    url: 'https://docs.example.org/json',
    title: 'JSON Types',
    text: 'The jsonb type stores a decomposed binary form; GIN operator classes index it.',
  },
  {
    url: 'https://docs.example.org/memory',
    title: 'Resource Consumption',
    text: 'The shared_buffers setting decides how much memory the server uses for caching data pages.',
  },
  ...Array.from({ length: 6 }, (_, index) => ({
    url: `https://docs.example.org/filler-${index}`,
    title: `Chapter ${index}`,
    text: 'The server reads the configuration file when it starts, and a table holds rows of data.',
  })),
];

const glossary = parseGlossary(
  [
    'lage\tcreate,make',
    'indeks\tindex',
    'blokkere\tblock,lock',
    'skriving\twrite',
    'tabell\ttable',
    'oppgradere\tupgrade',
    'hoved\tmain,major',
    'versjon\tversion',
    'ny\tnew',
    // Stemmed, "billig" is "bil", as "bilene" (the cars) is: another word, not an inflection.
    'billig\tcheap',
  ].join('\n'),
);

describe.each(databaseTargets())('query translation on $name', (target) => {
  let database: Database;
  let search: SearchService;
  const urls = async (query: string, options: { translate?: boolean } = {}) =>
    (await search.search('keyword', { query, ...options })).results.map((result) => result.source.url);

  beforeAll(async () => {
    database = await target.open();
    const executionId = uuidv7();
    await createKnowledgeIndex(database.db).indexDocuments(
      pages.map((page) => ({
        document: { sourceKey: page.url, url: page.url, title: page.title, language: 'english', executionId },
        segments: [
          {
            segmentIndex: 0,
            text: page.text,
            tokenCount: page.text.split(/\s+/).length,
            headingPath: [page.title],
          },
        ],
        total: 1,
      })),
    );
    search = createSearchService({
      db: database.db,
      embedders: undefined,
      translators: [
        createQueryTranslator({
          db: database.db,
          from: 'norwegian',
          to: 'english',
          glossary: async () => glossary,
        }),
      ],
    });
  });
  afterAll(async () => {
    await database?.close();
  });

  it("finds the English page for a Norwegian question through the glossary, and not through the words' look-alikes", async () => {
    const question = 'Hvordan lager jeg en indeks uten å blokkere skriving til tabellen?';
    const response = await search.search('keyword', { query: question });
    expect(response.parameters.detected_language).toBe('norwegian');
    expect(response.results[0]?.source.url).toBe('https://docs.example.org/create-index');
    // A translated word is not also searched as the English word it looks like.
    expect(response.results.map((result) => result.source.url)).not.toContain(
      'https://docs.example.org/brewing',
    );
    expect(response.parameters.query_translations).toEqual(
      expect.arrayContaining([
        { from: 'lager', lexeme: 'creat', weight: 1 },
        { from: 'lager', lexeme: 'make', weight: 0.5 },
        { from: 'indeks', lexeme: 'index', weight: 1 },
        { from: 'tabellen', lexeme: 'tabl', weight: 1 },
      ]),
    );
    // Untranslated, the Norwegian "lager" is the question's rarest match.
    expect((await urls(question, { translate: false }))[0]).toBe('https://docs.example.org/brewing');
  });

  it('splits a compound the glossary lacks into two parts it has', async () => {
    const response = await search.search('keyword', {
      query: 'Hvordan kan jeg oppgradere databasen til en ny hovedversjon?',
    });
    expect(response.results[0]?.source.url).toBe('https://docs.example.org/upgrading');
    expect(response.parameters.query_translations).toEqual(
      expect.arrayContaining([
        { from: 'hovedversjon', lexeme: 'main', weight: 1 },
        { from: 'hovedversjon', lexeme: 'version', weight: 1 },
      ]),
    );
  });

  it('still searches the words the glossary does not know, such as product names', async () => {
    const response = await search.search('keyword', {
      query: 'Hvordan lager jeg en indeks på en jsonb-kolonne?',
    });
    expect(response.results.map((result) => result.source.url)).toContain('https://docs.example.org/json');
    expect(response.parameters.query_translations).not.toContainEqual(
      expect.objectContaining({ from: 'jsonb' }),
    );
  });

  it('finds a glossary word by its inflections only', async () => {
    const response = await search.search('keyword', { query: 'Hvordan sletter jeg bilene fra tabellene?' });
    const translations = response.parameters.query_translations as { from: string; lexeme: string }[];
    expect(translations).toContainEqual(expect.objectContaining({ from: 'tabellene', lexeme: 'tabl' }));
    expect(translations).not.toContainEqual(expect.objectContaining({ lexeme: 'cheap' }));
  });

  it('searches a name the parser splits, such as a setting, as it is written', async () => {
    const response = await search.search('keyword', {
      query: 'Hvor stor bør shared_buffers være på en maskin med mye minne?',
    });
    expect(response.parameters.detected_language).toBe('norwegian');
    expect(response.results[0]?.source.url).toBe('https://docs.example.org/memory');
  });

  it('leaves an English question alone', async () => {
    const response = await search.search('keyword', {
      query: 'How do I build an index without blocking writes?',
    });
    expect(response.parameters.query_translations).toEqual([]);
    expect(response.results[0]?.source.url).toBe('https://docs.example.org/create-index');
  });
});

describe('glossaries', () => {
  it('merges the lines of one word, keeps the targets in order and skips comments and lines without a target', () => {
    const parsed = parseGlossary(
      '# nb -> en\nslette\tdelete, remove\nslette\terase,delete\nbare ord\n\ttom\n',
    );
    expect([...parsed.entries]).toEqual([['slette', ['delete', 'remove', 'erase']]]);
  });

  it('ships a Norwegian to English glossary with one line per word', async () => {
    const [norwegian] = builtInGlossaries;
    expect(norwegian).toMatchObject({ from: 'norwegian', to: 'english' });
    const loaded = await loadGlossary((norwegian as { file: URL }).file);
    expect(loaded.entries.size).toBeGreaterThan(1000);
    expect(loaded.entries.get('tabell')).toContain('table');
    expect(loaded.entries.get('spørring')).toContain('query');
  });
});
