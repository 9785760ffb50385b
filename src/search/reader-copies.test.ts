import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { itWhere } from '../../test/helpers/applies.js';
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
import { twinAddresses } from '../search-index/language.js';
import { createKeywordMemoryIndex, type KeywordMemoryIndex } from './keyword-memory-index.js';
import { addressedSegmentsSql, type KeywordQuery } from './keyword-sql.js';
import { rankingAgrees } from './reader-copies.js';
import { createSearchService, type SearchResponse, type SearchService } from './search-service.js';
import type { SearchRow } from './search-sql.js';

describe('twin addresses', () => {
  it('puts each folder of the reader’s language in place of the copy’s, keeping the rest of the path', () => {
    expect(twinAddresses('https://h/manual/da/export.html', 'norwegian')).toEqual([
      'https://h/manual/no/export.html',
      'https://h/manual/nb/export.html',
      'https://h/manual/nn/export.html',
    ]);
    expect(twinAddresses('docs/sv-SE/export.md#top', 'english')).toEqual(['docs/en/export.md']);
  });

  it('has none without a language folder, or when the copy is already in the reader’s language', () => {
    expect(twinAddresses('https://h/manual/export.html', 'norwegian')).toEqual([]);
    expect(twinAddresses('https://h/manual/nn/export.html', 'norwegian')).toEqual([]);
  });
});

describe('a detected language and the ranking', () => {
  const ranked = (...folders: string[]) =>
    folders.map(
      (folder, index) =>
        ({ url: `https://h/manual/${folder}/page-${index}.html`, source_key: 'k' }) as SearchRow,
    );

  it('disagree when another language holds more of the first pages than the detected one, and at least two', () => {
    // GIMP dev g057: a Norwegian question detected as English, the Norwegian copies ranked.
    expect(rankingAgrees(ranked('nn', 'nn', 'en', 'nn', 'da'), 'english', 10)).toBe(false);
    expect(rankingAgrees(ranked('nn', 'nn', 'en', 'nn', 'da'), 'norwegian', 10)).toBe(true);
    // Only the first `limit` pages count.
    expect(rankingAgrees(ranked('en', 'nn', 'nn', 'nn'), 'english', 2)).toBe(true);
  });

  it('agree when a single translation ranked alone, or the detected language holds as many', () => {
    expect(rankingAgrees(ranked('da'), 'norwegian', 1)).toBe(true);
    expect(rankingAgrees(ranked('da', 'nb', 'da', 'nn'), 'norwegian', 10)).toBe(true);
    expect(rankingAgrees(ranked('da', 'sv'), 'norwegian', 10)).toBe(true);
  });
});

/**
 * One page, "Export an image", in Danish, Norwegian and English, each copy from its own
 * execution. The Danish copy is one short segment holding every word of the question, so BM25
 * ranks it first; the Norwegian copy opens with a segment that holds none of them, and answers
 * in its second, longer one, under headings without them. At a depth of one only the Danish copy is a candidate.
 */
const copies: TranslatedCopy[] = [
  {
    folder: 'da',
    language: 'danish',
    title: 'Eksporter et billede',
    sections: [['Eksporter som PNG', 'Eksporter billedet som PNG fil med kommandoen eksporter.']],
  },
  {
    folder: 'nb',
    language: 'norwegian',
    title: 'Lagre i andre formater',
    sections: [
      [
        'Om dette kapitlet',
        'Dette kapitlet handler om å lagre arbeidet ditt i et annet format, slik at andre programmer kan åpne det. Les det før du sender noe til trykkeriet.',
      ],
      [
        'Når mottakeren trenger en annen type',
        'Når du skal eksportere bildet som en PNG fil, velger du kommandoen eksporter i menyen og skriver inn et navn som slutter på riktig endelse. Programmet spør deretter om komprimering, om metadata skal være med, om fargeprofilen skal bygges inn og om gjennomsiktige områder skal beholdes. Valgene huskes til neste gang.',
      ],
    ],
  },
  {
    folder: 'en',
    language: 'english',
    title: 'Export an image',
    sections: [
      [
        'Export as PNG',
        'To export the image as a PNG file, choose the export command in the file menu and type a file name that ends in png. The program then asks about compression and whether to keep metadata.',
      ],
    ],
  },
];

const question = 'Hvordan kan jeg eksportere bildet som PNG fil med kommandoen eksporter?';

describe.each(
  (await vectorDatabaseTargets()).flatMap((target) => pageLayouts.map((layout) => ({ ...target, layout }))),
)('the reader’s copy fetched when only a translation ranked, on $name, copies named by $layout', (target) => {
  let database: Database;
  let served: ServedPages;
  const url = (folder: string) => served.url(folder);
  /** Keyword ranking and rows from the search statement. */
  let sqlSearch: SearchService;
  /** The same from the in-memory index, filled before the tests. */
  let memorySearch: SearchService;
  let keywordIndex: KeywordMemoryIndex;
  beforeAll(async () => {
    database = await target.open();
    served = await servePages(copies, target.layout, 'export');
    await indexServedCopies(database, copies, served, {
      vectors: target.vectors,
      executionOf: (copy) => `manual-${copy.folder}`,
    });
    const embedders = target.vectors ? createEmbedderCatalog([createHashEmbedder()]) : undefined;
    sqlSearch = createSearchService({ db: database.db, embedders });
    keywordIndex = createKeywordMemoryIndex(database.db);
    await keywordIndex.ready();
    memorySearch = createSearchService({ db: database.db, embedders, keywordIndex });
  });
  afterAll(async () => {
    await served?.close();
    await database?.close();
  });

  it('stores one page key for the three copies, each with its language', async () => {
    const rows = await database.db
      .selectFrom('knowledge_documents')
      .select(['url', 'page_key', 'page_language'])
      .orderBy('url')
      .execute();
    expect(new Set(rows.map((row) => row.page_key)).size).toBe(1);
    expect(rows[0]?.page_key).toBeTruthy();
    expect(Object.fromEntries(rows.map((row) => [row.url, row.page_language]))).toEqual({
      [url('da')]: 'danish',
      [url('nb')]: 'norwegian',
      [url('en')]: 'english',
    });
  });

  const shown = (response: SearchResponse) =>
    response.results.map((result) => ({
      url: result.source.url,
      heading: result.source.heading_path.at(-1),
      keywordRank: result.components.find((component) => component.ranking === 'keyword')?.rank,
    }));

  it('scores the addressed segments from memory as the statement does', async () => {
    const query: KeywordQuery = {
      text: question,
      languages: ['norwegian', 'danish', 'english'],
      queryLanguage: 'norwegian',
      match: 'any',
    };
    // The Danish copy by its address; the Norwegian one by its page key (and, in the folder layout, its address too).
    const addresses = [url('da'), url('no')];
    const filters = { executionIds: null, language: undefined };
    const { page_key: key } = await database.db
      .selectFrom('knowledge_documents')
      .select('page_key')
      .where('url', '=', url('nb'))
      .executeTakeFirstOrThrow();
    const pages = { keys: [key ?? ''], language: 'norwegian' };
    const fromSql = (await addressedSegmentsSql(query, addresses, filters, pages).execute(database.db)).rows;
    const fromMemory = await keywordIndex.addressed(query, addresses, filters, pages);
    const scores = (rows: readonly { segment_id: string; raw: number }[] | undefined) =>
      new Map(rows?.map((row) => [row.segment_id, Number(row.raw)]));
    expect(fromSql.map((row) => [row.url, row.segment_index])).toEqual(
      [...(fromMemory ?? [])].map((row) => [row.url, row.segment_index]),
    );
    // Three segments, two of them holding query words.
    expect([...scores(fromSql).values()].filter((raw) => raw > 0)).toHaveLength(2);
    for (const [segment, raw] of scores(fromSql))
      expect(scores(fromMemory).get(segment)).toBeCloseTo(raw, 12);
    // Without a query, every segment scores 0 (the first is then the document's).
    expect(
      (await keywordIndex.addressed(undefined, addresses, filters, pages))?.map((row) => row.raw),
    ).toEqual([0, 0, 0]);
  });

  for (const path of ['sql', 'memory'] as const) {
    const service = () => (path === 'sql' ? sqlSearch : memorySearch);

    it(`${path}: the Danish copy is the only candidate at depth one, and the Norwegian reader gets the Norwegian copy's best segment`, async () => {
      const response = await service().search('keyword', { query: question, limit: 1 });
      expect(response.parameters).toMatchObject({
        detected_language: 'norwegian',
        keyword_ranking: path,
        reader_copies_fetched: 1,
      });
      // Not a candidate (no keyword rank), and its second segment, the one holding the question's words.
      expect(shown(response)).toEqual([
        { url: url('nb'), heading: 'Når mottakeren trenger en annen type', keywordRank: null },
      ]);
      // The same question with every copy within the depth: the Norwegian copy ranked, nothing fetched.
      const deep = await service().search('keyword', { query: question, limit: 10 });
      expect(deep.parameters.reader_copies_fetched).toBe(0);
      expect(shown(deep)[0]).toMatchObject({
        url: url('nb'),
        heading: 'Når mottakeren trenger en annen type',
      });
      expect(shown(deep).map((result) => result.url)).toContain(url('da'));
    });

    it(`${path}: without the reader's language detected, or outside the request's sources, nothing is fetched`, async () => {
      const guessed = await service().search('keyword', { query: 'PNG', limit: 1 });
      expect(guessed.parameters.detected_language).toBeNull();
      expect(guessed.parameters.reader_copies_fetched).toBe(0);
      const sources = await service().search('keyword', {
        query: question,
        limit: 1,
        sources: ['manual-da', 'manual-en'],
      });
      expect(sources.parameters.reader_copies_fetched).toBe(0);
      expect(shown(sources)).toEqual([{ url: url('da'), heading: 'Eksporter som PNG', keywordRank: 1 }]);
    });

    itWhere(target.vectors)(
      `${path}: RRF with both rankings one deep (the Danish copy first in each) gives the page to the fetched Norwegian copy`,
      async () => {
        // The candidate depth is at least the limit: a limit of one keeps each ranking one deep.
        const response = await service().search('rrf', {
          query: question,
          limit: 1,
          candidate_depth: { keyword: 1, vector: 1 },
        });
        expect(response.parameters).toMatchObject({
          detected_language: 'norwegian',
          reader_copies_fetched: 1,
        });
        expect(
          response.results.map((result) => [result.source.url, result.components.map((c) => c.rank)]),
        ).toEqual([[url('nb'), [null, null]]]);
      },
    );
  }
});
