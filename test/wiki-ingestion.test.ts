/**
 * Wiki ingest end to end against a Confluence double on loopback (Cloud REST v2 and Data
 * Center REST v1): wiki_space_crawler -> wiki_page_fetcher -> storage_retriever ->
 * html_to_markdown -> segments into the knowledge index, and the attachments through
 * wiki_attachment_fetcher -> document_converter. Then search finds the pages and the
 * attachment, attributed to its page.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSearchService } from '../src/search/search-service.js';
import {
  type ConfluenceDouble,
  DOUBLE_TOKEN,
  DOUBLE_USER,
  type DoublePage,
  startConfluenceDouble,
} from './helpers/confluence-double.js';
import { databaseTargets } from './helpers/databases.js';
import { createTestEngine, runToStatus, type TestEngine } from './helpers/engine.js';
import { LOOPBACK_FETCH } from './helpers/test-site.js';

const vacuumPage = `<p>Autovacuum keeps the <strong>visibility map</strong> current.</p>
<ac:structured-macro ac:name="code"><ac:parameter ac:name="language">sql</ac:parameter><ac:plain-text-body><![CDATA[ALTER TABLE orders SET (autovacuum_vacuum_scale_factor = 0.02);]]></ac:plain-text-body></ac:structured-macro>
<ac:structured-macro ac:name="warning"><ac:rich-text-body><p>Never disable the freeze horizon checks.</p></ac:rich-text-body></ac:structured-macro>
<table><tbody><tr><th>Setting</th><th>Value</th></tr><tr><td>naptime</td><td>15s</td></tr></tbody></table>
<p>See <ac:link><ri:page ri:content-title="Replication runbook" /></ac:link> and <ac:link><ri:attachment ri:filename="Møtereferat 2026.docx" /></ac:link>.</p>`;

async function pages(): Promise<DoublePage[]> {
  const memo = await readFile(new URL('./fixtures/documents/memo.docx', import.meta.url));
  return [
    {
      id: '1001',
      title: 'Vacuum tuning',
      version: 3,
      storage: vacuumPage,
      attachments: [
        {
          id: '7001',
          filename: 'Møtereferat 2026.docx',
          mediaType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
          bytes: memo,
        },
      ],
    },
    {
      id: '1002',
      title: 'Replication runbook',
      version: 1,
      parentId: '1001',
      // A key in the unnamed parameter, as a Data Center page converted from `{jira:OPS-77}` has it.
      storage:
        '<p>Promote the standby with pg_promote when the primary is lost.</p>' +
        '<p>Drill <ac:structured-macro ac:name="jira"><ac:parameter ac:name="">OPS-77</ac:parameter></ac:structured-macro></p>',
    },
    {
      id: '1003',
      title: 'Partitioning guide',
      version: 2,
      storage: '<p>Declarative partitioning splits measurement tables by range.</p>',
    },
    { id: '1004', title: 'Retired page', version: 1, storage: '<p>obsolete</p>', deletedAfterListing: true },
    {
      id: '1005',
      title: 'Index bloat',
      version: 1,
      storage: '<p>REINDEX CONCURRENTLY rebuilds a bloated btree index.</p>',
    },
  ];
}

const connection = (flavor: 'cloud' | 'datacenter', url: string, credentials = true) =>
  flavor === 'cloud'
    ? `{ provider: confluence_cloud, base_url: "${url}", username: "${DOUBLE_USER}", token_secret: wiki, rate_limit: 200 }`
    : `{ provider: confluence_datacenter, base_url: "${url}", token_secret: ${credentials ? 'wiki' : 'wrong'}, rate_limit: 200 }`;

const pipeline = (config: string, limits: { page?: string; file?: string } = {}) => `
init_message:
  route: crawl
  payload: { space: ENG }
routes:
  - id: crawl
    adapters:
      - type: wiki_space_crawler
        config: ${config}
        retry: { max_attempts: 1 }
        destination: pages
  - id: pages
    adapters:
      - type: wiki_page_fetcher
        config: ${config.replace(/ }$/, `, attachment_destination: attachments${limits.page ? `, max_page_mb: ${limits.page}` : ''} }`)}
        destination: markdown
  - id: markdown
    adapters:
      - type: storage_retriever
      - type: html_to_markdown
      - type: smart_segmenter
      - type: segment_publisher
        destination: embed
  - id: attachments
    adapters:
      - type: wiki_attachment_fetcher
        config: ${limits.file ? config.replace(/ }$/, `, max_file_size_mb: ${limits.file} }`) : config}
        retry: { max_attempts: 1 }
      - type: document_converter
      - type: smart_segmenter
      - type: segment_publisher
        destination: embed
  - id: embed
    adapters:
      - type: embedding_generator
`;

describe.each(databaseTargets())('wiki ingest on $name', (target) => {
  let engine: TestEngine;
  let wiki: ConfluenceDouble;
  beforeAll(async () => {
    wiki = await startConfluenceDouble({ pages: await pages() });
    engine = await createTestEngine(target, {
      settings: {
        ...LOOPBACK_FETCH,
        secrets: { wiki: DOUBLE_TOKEN, wrong: 'not-the-token' },
        secret_origins: { wiki: [wiki.url], wrong: [wiki.url] },
      },
    });
  });
  afterAll(async () => {
    await engine?.close();
    await wiki?.close();
  });

  async function run(yaml: string, status: 'completed' | 'failed') {
    const config = await engine.configs.create({ config_yaml: yaml });
    return runConfig(config.id, status);
  }

  const runConfig = (configId: string, status: 'completed' | 'failed') =>
    runToStatus(engine, configId, status);

  it.each([
    'cloud',
    'datacenter',
  ] as const)('ingests a %s space with its attachments into search', async (flavor) => {
    wiki.requests.length = 0;
    // The first listing request is throttled: the crawler waits for Retry-After and goes on.
    wiki.throttle(flavor === 'cloud' ? /\/pages$/ : /\/rest\/api\/content$/, 1);
    const lineage = await run(pipeline(connection(flavor, wiki.url)), 'completed');
    expect(lineage.filter((row) => row.status === 'failed').map((row) => row.error)).toEqual([]);
    expect(lineage.filter((row) => row.status === 'skipped').map((row) => row.error)).toEqual([
      expect.stringMatching(/page 1004: .* answered 404/),
    ]);
    // Five pages listed two at a time (real cursors or start/limit), after one 429.
    const listings = wiki.requests.filter((line) =>
      (flavor === 'cloud' ? /\/spaces\/98304\/pages/ : /\/rest\/api\/content\?/).test(line),
    );
    expect(listings).toHaveLength(4);
    expect(new Set(listings).size).toBe(3);

    const search = createSearchService({ db: engine.database.db, embedders: undefined });
    const top = async (query: string) => (await search.search('keyword', { query, limit: 5 })).results[0];
    const vacuum = await top('autovacuum scale factor');
    expect(vacuum?.source.title).toBe('Vacuum tuning');
    expect(vacuum?.source.url).toMatch(
      flavor === 'cloud' ? /\/wiki\/spaces\/ENG\/pages\/1001\// : /\/display\/ENG\/Vacuum\+tuning$/,
    );
    expect((await top('promote standby'))?.source.title).toBe('Replication runbook');
    // The attachment, downloaded across the redirect without credentials, under its page's title.
    const memo = await top('bucket service account owners');
    expect(memo?.source.title).toBe('Vacuum tuning / Møtereferat 2026.docx');
  });

  it('stores the page body as storage format and turns its macros into markdown', async () => {
    const lineage = await run(pipeline(connection('cloud', wiki.url)), 'completed');
    const stored = await engine.storage.list({ prefix: `${lineage[0]?.execution_id}/wiki_page_fetcher/` });
    const page = stored.objects.find((object) => object.key.endsWith('/1001.html'));
    const body = (await engine.storage.get(page?.key as string)).toString('utf8');
    expect(body).toContain('<ac:structured-macro ac:name="code">');
    expect((await engine.storage.stat(page?.key as string))?.metadata).toMatchObject({
      page_id: '1001',
      version: 3,
      space_key: 'ENG',
    });
    const segments = await engine.database.db
      .selectFrom('knowledge_segments')
      .select('text')
      .where('text', 'like', '%autovacuum_vacuum_scale_factor%')
      .execute();
    expect(segments.map((row) => row.text).join('\n')).toContain('```sql\nALTER TABLE orders');
  });

  it("links a Data Center page's Jira issue to the jira_url the page fetcher is given", async () => {
    const yaml = pipeline(connection('datacenter', wiki.url)).replace(
      'attachment_destination: attachments',
      'attachment_destination: attachments, jira_url: "https://jira.acme.example"',
    );
    const lineage = await run(yaml, 'completed');
    expect(lineage.filter((row) => row.status === 'failed').map((row) => row.error)).toEqual([]);
    const segments = await engine.database.db
      .selectFrom('knowledge_segments')
      .select('text')
      .where('text', 'like', '%Drill%')
      .execute();
    expect(segments.map((row) => row.text).join('\n')).toContain(
      'Drill [OPS-77](https://jira.acme.example/browse/OPS-77)',
    );
  });

  it('fails an oversized page or attachment as its own message, whatever size the wiki lists', async () => {
    const memo = wiki.space.pages[0]?.attachments?.[0] as NonNullable<DoublePage['attachments']>[number];
    memo.listedSize = 900; // the listing claims less than the cap
    try {
      let lineage = await run(pipeline(connection('cloud', wiki.url), { file: '0.001' }), 'completed');
      let failed = lineage.filter((row) => row.status === 'failed');
      expect(failed.map((row) => row.stage)).toEqual(['wiki_attachment_fetcher']);
      expect(failed[0]?.error).toMatch(/over the limit of 1048 bytes/);
      lineage = await run(pipeline(connection('cloud', wiki.url), { page: '0.0002' }), 'completed');
      failed = lineage.filter((row) => row.status === 'failed');
      expect(failed.map((row) => [row.stage, row.error])).toEqual([
        ['wiki_page_fetcher', 'page 1001 is over max_page_mb (0.0002 MB)'],
      ]);
    } finally {
      delete memo.listedSize;
    }
  });

  it('fails the run at once on wrong credentials, naming them', async () => {
    const lineage = await run(pipeline(connection('datacenter', wiki.url, false)), 'failed');
    const failed = lineage.filter((row) => row.status === 'failed');
    expect(failed.map((row) => [row.stage, row.attempts])).toEqual([['wiki_space_crawler', 1]]);
    expect(failed[0]?.error).toMatch(/answered 401: check the wiki credentials/);
  });

  // Last: it edits and deletes pages of the double.
  it.each([
    'cloud',
    'datacenter',
  ] as const)('fetches only the pages changed since the last completed %s run, and forgets deleted ones', async (flavor) => {
    const pages = wiki.space.pages;
    const original = pages.map((page) => ({ ...page }));
    // Only pages that exist here: a page listed but gone is skipped, so it is never known.
    pages.splice(0, pages.length, ...pages.filter((page) => !page.deletedAfterListing));
    try {
      const config = await engine.configs.create({ config_yaml: pipeline(connection(flavor, wiki.url)) });
      await runConfig(config.id, 'completed');
      const search = createSearchService({ db: engine.database.db, embedders: undefined });
      // This flavor's documents only: the other flavor's run indexed the same pages elsewhere.
      const ours = (url: string | null) =>
        (url ?? '').startsWith(`${wiki.url}/wiki/`) === (flavor === 'cloud');
      const titles = async (query: string) =>
        (await search.search('keyword', { query, limit: 20 })).results
          .filter((result) => ours(result.source.url))
          .map((result) => result.source.title);
      expect(await titles('autovacuum scale factor')).toContain('Vacuum tuning');
      expect(await titles('bucket service account owners')).toContain(
        'Vacuum tuning / Møtereferat 2026.docx',
      );

      // An unchanged second run fetches no page at all.
      const pageFetches = () =>
        wiki.requests
          .map((line) => /(?:\/pages|\/content)\/(\d+)(?:\?|$)/.exec(line)?.[1])
          .filter(Boolean)
          .sort();
      wiki.requests.length = 0;
      await runConfig(config.id, 'completed');
      expect(pageFetches()).toEqual([]);

      // Three pages edited, the one with the attachment deleted.
      for (const id of ['1002', '1003', '1005']) {
        const page = pages.find((candidate) => candidate.id === id) as DoublePage;
        page.version += 1;
        page.storage = `${page.storage}<p>Revised in the ${flavor} edition.</p>`;
      }
      pages.splice(
        pages.findIndex((page) => page.id === '1001'),
        1,
      );
      wiki.requests.length = 0;
      await runConfig(config.id, 'completed');
      expect(pageFetches()).toEqual(['1002', '1003', '1005']);
      expect(await titles(`revised ${flavor} edition`)).toEqual(
        expect.arrayContaining(['Replication runbook', 'Partitioning guide', 'Index bloat']),
      );
      expect(await titles('autovacuum scale factor')).not.toContain('Vacuum tuning');
      expect(await titles('bucket service account owners')).not.toContain(
        'Vacuum tuning / Møtereferat 2026.docx',
      );
    } finally {
      pages.splice(0, pages.length, ...original);
    }
  });
});
