import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { vectorDatabaseTargets } from '../../test/helpers/databases.js';
import {
  indexServedCopies,
  pageLayouts,
  type ServedPages,
  servePages,
  type TranslatedCopy,
} from '../../test/helpers/translated-pages.js';
import type { Database } from '../db/database.js';
import { createEmbedderCatalog } from '../embedding/embedder.js';
import { createHashEmbedder } from '../embedding/hash-embedder.js';
import { pageIdentity } from '../search-index/language.js';
import { pageCopy, preferQueryLanguage } from './language-preference.js';
import { createSearchService, type SearchService } from './search-service.js';

describe('page copies', () => {
  it('takes a language folder out of the path, with or without a region', () => {
    expect(pageCopy('https://docs.example.org/manual/nb/backup.html')).toEqual({
      page: 'https://docs.example.org/manual/backup.html',
      language: 'norwegian',
    });
    expect(pageCopy('https://docs.example.org/en-US/backup.html#restore')).toEqual({
      page: 'https://docs.example.org/backup.html',
      language: 'english',
    });
    expect(pageCopy('docs/sv/backup.md')).toEqual({ page: 'docs/backup.md', language: 'swedish' });
  });

  it('sees no copy without a language folder, or with a folder the index has no stemmer for', () => {
    expect(pageCopy('https://docs.example.org/manual/backup.html')).toBeUndefined();
    expect(pageCopy('https://docs.example.org/ja/backup.html')).toBeUndefined();
    expect(pageCopy('https://docs.example.org/db/backup.html')).toBeUndefined();
  });

  it('keys a page by its hreflang set when it declares one, else by its language folder', () => {
    const set = {
      en: 'https://h/help/a.html',
      nb: 'https://h/help/a.html?lang=nb',
      'x-default': 'https://h/help/a.html',
    };
    // Every copy of the set gets the set's least address; its language is the code the set gives its own URL.
    expect(pageIdentity('https://h/help/a.html?lang=nb', set, 'danish')).toEqual({
      page: 'https://h/help/a.html',
      language: 'norwegian',
    });
    expect(pageIdentity('https://h/help/a.html', set, undefined)).toEqual({
      page: 'https://h/help/a.html',
      language: 'english',
    });
    // Not in its own set: the document's language; folders are taken out of the set's addresses.
    expect(pageIdentity('https://h/sv-SE/a.html', { da: 'https://h/da/a.html' }, 'swedish')).toEqual({
      page: 'https://h/a.html',
      language: 'swedish',
    });
    expect(pageIdentity('https://h/other.html', { da: 'https://h/da/other.html' }, 'simple')).toBeUndefined();
    // Only itself declared, or nothing: the folder rule, regions included.
    expect(pageIdentity('https://h/nb-NO/a.html', { nb: 'https://h/nb-NO/a.html' }, 'norwegian')).toEqual({
      page: 'https://h/a.html',
      language: 'norwegian',
    });
    expect(pageIdentity('https://h/help/a.html', undefined, 'english')).toBeUndefined();
    // An x-default shared by every page (a language picker) makes no copies.
    expect(pageIdentity('https://h/a.html', { 'x-default': 'https://h/' }, 'english')).toBeUndefined();
  });

  it('gives the best place of a page to its copy in the query language, and moves other pages only up', () => {
    const result = (url: string, language: string) => ({ url, source_key: url, language });
    const ranked = [
      result('http://h/da/a.html', 'danish'),
      result('http://h/other.html', 'english'),
      result('http://h/sv/a.html', 'swedish'),
      result('http://h/nb/a.html', 'norwegian'),
    ];
    const urls = (list: typeof ranked) => list.map((entry) => entry.url);
    expect(urls(preferQueryLanguage(ranked, 'norwegian'))).toEqual([
      'http://h/nb/a.html',
      'http://h/other.html',
      'http://h/da/a.html',
      'http://h/sv/a.html',
    ]);
    expect(urls(preferQueryLanguage(ranked, undefined))).toEqual(urls(ranked));
    expect(urls(preferQueryLanguage(ranked, 'german'))).toEqual(urls(ranked));
  });

  it('shows a page once: its other copies go below every other result', () => {
    const result = (url: string, language: string) => ({ url, source_key: url, language });
    const ranked = [
      result('http://h/en/a.html#1', 'english'),
      result('http://h/nn/a.html#1', 'norwegian'),
      result('http://h/en/b.html', 'english'),
      result('http://h/en/a.html#2', 'english'),
      result('http://h/nn/a.html#2', 'norwegian'),
      result('http://h/other.html', 'english'),
    ];
    const urls = (list: typeof ranked) => list.map((entry) => entry.url);
    // The Norwegian copy's two segments take the page's first two places; the English copy's
    // segments follow every other result.
    expect(urls(preferQueryLanguage(ranked, 'norwegian'))).toEqual([
      'http://h/nn/a.html#1',
      'http://h/nn/a.html#2',
      'http://h/en/b.html',
      'http://h/other.html',
      'http://h/en/a.html#1',
      'http://h/en/a.html#2',
    ]);
  });

  it('without the query language, gives the page to the copy written in its folder language', () => {
    // An English text left untranslated under sv/ ranks first; the English copy is the page.
    const result = (url: string, language: string) => ({ url, source_key: url, language });
    const ranked = [
      result('http://h/sv/a.html', 'english'),
      result('http://h/da/a.html', 'english'),
      result('http://h/en/a.html', 'english'),
      result('http://h/en/b.html', 'english'),
    ];
    const urls = (list: typeof ranked) => list.map((entry) => entry.url);
    expect(urls(preferQueryLanguage(ranked, undefined))).toEqual([
      'http://h/en/a.html',
      'http://h/en/b.html',
      'http://h/sv/a.html',
      'http://h/da/a.html',
    ]);
    // A Swedish reader still gets the sv/ copy, English text or not: it is the one in their folder.
    expect(urls(preferQueryLanguage(ranked, 'swedish'))[0]).toBe('http://h/sv/a.html');
  });
});

/**
 * One manual page, "Backup and restore", in Norwegian, Danish, Swedish and English, each under
 * its language folder. The Danish copy's first section is the shortest, so BM25 ranks it first
 * for a question whose words all four share ("weir backup", "databasen", "kopi").
 */
const copies: TranslatedCopy[] = [
  {
    folder: 'nb',
    language: 'norwegian',
    title: 'Sikkerhetskopi og gjenoppretting',
    sections: [
      [
        'Ta sikkerhetskopi',
        'Weir lagrer alle innholdsflyter, kjøringer og indekser i én database. Ta sikkerhetskopi jevnlig, og alltid før du oppgraderer til en ny versjon. Kommandoen weir backup skriver en komplett kopi av databasen til en fil som du kan flytte til en annen maskin. Filen er komprimert og kan lagres hvor som helst.',
      ],
      [
        'Gjenopprette fra en sikkerhetskopi',
        'Stopp tjenesten før du gjenoppretter. Kjør weir restore med filen som argument. Kommandoen sjekker at filen er hel før den erstatter databasen, og avbryter uten å endre noe hvis kontrollsummen ikke stemmer. Start tjenesten igjen når gjenopprettingen er ferdig.',
      ],
    ],
  },
  {
    folder: 'da',
    language: 'danish',
    title: 'Sikkerhedskopiering og gendannelse',
    sections: [
      [
        'Tag en sikkerhedskopi',
        'Kommandoen weir backup skriver en komplet kopi af databasen til en fil. Tag en kopi, før du opgraderer.',
      ],
      [
        'Gendan fra en sikkerhedskopi',
        'Stop tjenesten, før du gendanner. Kør weir restore med filen som argument. Kommandoen kontrollerer, at filen er hel, før den erstatter databasen, og afbryder uden at ændre noget, hvis kontrolsummen ikke stemmer. Start tjenesten igen, når gendannelsen er færdig.',
      ],
    ],
  },
  {
    folder: 'sv',
    language: 'swedish',
    title: 'Säkerhetskopiering och återställning',
    sections: [
      [
        'Ta en säkerhetskopia',
        'Weir lagrar alla innehållsflöden, körningar och index i en databas. Ta säkerhetskopior regelbundet, och alltid innan du uppgraderar till en ny version. Kommandot weir backup skriver en fullständig kopia av databasen till en fil som du kan flytta till en annan dator.',
      ],
      [
        'Återställ från en säkerhetskopia',
        'Stoppa tjänsten innan du återställer. Kör weir restore med filen som argument. Kommandot kontrollerar att filen är hel innan den ersätter databasen, och avbryter utan att ändra något om kontrollsumman inte stämmer. Starta tjänsten igen när återställningen är klar.',
      ],
    ],
  },
  {
    folder: 'en',
    language: 'english',
    title: 'Backup and restore',
    sections: [
      [
        'Take a backup',
        'Weir keeps all content pipelines, executions and indexes in one database. Take a backup regularly, and always before you upgrade to a new version. The weir backup command writes a complete copy of the database to a file that you can move to another machine.',
      ],
      [
        'Restore from a backup',
        'Stop the service before you restore. Run weir restore with the file as its argument. The command checks that the file is whole before it replaces the database, and stops without changing anything if the checksum does not match. Start the service again when the restore has finished.',
      ],
    ],
  },
];

// Only targets with pgvector rank by vectors (a server without it answers 503, tested in
// test/search-api.test.ts); the node-postgres path is covered by pglite-wire.
describe.each(
  (await vectorDatabaseTargets())
    .filter((target) => target.vectors)
    .flatMap((target) => pageLayouts.map((layout) => ({ ...target, layout }))),
)('the reader’s language first on $name, copies named by $layout', (target) => {
  let database: Database;
  let search: SearchService;
  let served: ServedPages;
  beforeAll(async () => {
    database = await target.open();
    served = await servePages(copies, target.layout, 'backup');
    await indexServedCopies(database, copies, served, { vectors: true, executionOf: () => 'manual' });
    search = createSearchService({
      db: database.db,
      embedders: createEmbedderCatalog([createHashEmbedder()]),
    });
  });
  afterAll(async () => {
    await served?.close();
    await database?.close();
  });

  const first = async (query: string) => {
    const response = await search.search('rrf', { query });
    return { url: response.results[0]?.source.url, detected: response.parameters.detected_language };
  };

  it('a Norwegian question gets the Norwegian copy first, not the Danish one', async () => {
    expect(await first('Hva gjør jeg for å ta en kopi av databasen med weir backup?')).toEqual({
      url: served.url('nb'),
      detected: 'norwegian',
    });
  });

  it('an English question gets the English copy first', async () => {
    expect(await first('What do I do to take a copy of the database with weir backup?')).toEqual({
      url: served.url('en'),
      detected: 'english',
    });
  });
});
