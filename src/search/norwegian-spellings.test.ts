import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTargets } from '../../test/helpers/databases.js';
import type { Database } from '../db/database.js';
import { createKnowledgeIndex } from '../search-index/knowledge-index.js';
import type { SearchLanguage } from '../search-index/language.js';
import { ruleVariants } from './norwegian-spellings.js';
import { createSearchService, type SearchService } from './search-service.js';

describe('Bokmål and Nynorsk spelling rules', () => {
  it('respells hv-/kv-, -het/-heit and the comparative both ways', () => {
    expect(ruleVariants('hvit')).toEqual(['kvit']);
    expect(ruleVariants('kvit')).toEqual(['hvit']);
    expect(ruleVariants('hastigheten')).toEqual(['hastigheiten']);
    expect(ruleVariants('lysere')).toEqual(['lysare']);
    expect(ruleVariants('mørkare')).toEqual(['mørkere']);
    expect(ruleVariants('bilde')).toEqual([]);
  });
});

/** Two pages: one in Nynorsk about making a picture lighter, one in Bokmål about something else. */
const pages: { url: string; language: SearchLanguage; title: string; text: string }[] = [
  {
    url: 'http://127.0.0.1/help/nn/dodge.html',
    language: 'norwegian',
    title: 'Avskygging',
    text: 'Verktøyet gjer fargane i biletet lysare eller mørkare der du målar med penselen. Det gjer det same som fotografen gjorde i mørkerommet.',
  },
  {
    url: 'http://127.0.0.1/help/nb/layers.html',
    language: 'norwegian',
    title: 'Lag',
    text: 'Et lag er som et ark med maling. Du kan gjøre et lag synlig eller usynlig, og lag kan ligge over hverandre i bildet. Det nederste laget er bakgrunnen.',
  },
];

describe.each(databaseTargets())('a Bokmål question over Nynorsk pages on $name', (target) => {
  let database: Database;
  let search: SearchService;
  beforeAll(async () => {
    database = await target.open();
    await createKnowledgeIndex(database.db).indexDocuments(
      pages.map(({ url, language, title, text }) => ({
        document: { sourceKey: url, url, title, language, executionId: 'help' },
        segments: [{ segmentIndex: 0, text, tokenCount: text.split(' ').length, headingPath: [title] }],
      })),
    );
    search = createSearchService({ db: database.db, embedders: undefined });
  });
  afterAll(() => database?.close());

  it('finds the Nynorsk page through the other spelling of its words', async () => {
    const query = 'Hvordan kan jeg gjøre bildet lysere eller mørkere med penselen?';
    const response = await search.search('keyword', { query });
    expect(response.parameters.detected_language).toBe('norwegian');
    expect(response.results[0]?.source.url).toBe('http://127.0.0.1/help/nn/dodge.html');
    expect(response.parameters.query_spellings).toEqual(
      expect.arrayContaining([
        { lexeme: 'bilet', weight: 1, from: 'bildet' },
        { lexeme: 'lysar', weight: 1, from: 'lysere' },
      ]),
    );
    // Without respelling (translate: false) the Bokmål page's shared words win.
    const plain = await search.search('keyword', { query, translate: false });
    expect(plain.parameters.query_spellings).toBeUndefined();
    expect(plain.results[0]?.source.url).toBe('http://127.0.0.1/help/nb/layers.html');
  });
});
