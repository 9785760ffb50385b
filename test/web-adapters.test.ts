/**
 * The web adapters against the loopback test site: directly through the adapter test kit, and
 * one real pipeline (sitemap_parser -> url_expander -> web_scraper -> web_content_storage)
 * through the engine on every database target.
 */
import type { TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MessageSkipped } from '../src/adapters/adapter.js';
import {
  type AdapterTestKit,
  collectOutputs,
  createAdapterTestKit,
  memoryClaims,
} from '../src/adapters/adapter-testing.js';
import { pdfFetcher } from '../src/adapters/web/pdf-fetcher.js';
import { sitemapParser } from '../src/adapters/web/sitemap-parser.js';
import { webScraper } from '../src/adapters/web/web-scraper.js';
import { httpHostStates } from '../src/http/rate-limiter.js';
import { chromiumPath, needsChromium } from './helpers/chromium.js';
import { databaseTargets } from './helpers/databases.js';
import { createTestEngine, type TestEngine, waitForStatus } from './helpers/engine.js';
import { LOOPBACK_FETCH, SAMPLE_PDF, startTestSite, type TestSite } from './helpers/test-site.js';

let site: TestSite;
let kit: AdapterTestKit;
beforeAll(async () => {
  site = await startTestSite();
  kit = await createAdapterTestKit({ settings: { ...LOOPBACK_FETCH, chromium_path: chromiumPath } });
});
afterAll(async () => {
  await kit?.close();
  await site?.close();
});

const configOf = (adapter: { config: TSchema }, config: object = {}) =>
  Value.Default(adapter.config, structuredClone(config)) as never;
const sitemaps = (config: object = {}) =>
  sitemapParser.create(configOf(sitemapParser, { rate_limit: 50, ...config }), kit.resources);
const scraper = (config: object = {}) =>
  webScraper.create(configOf(webScraper, { rate_limit: 50, ...config }), kit.resources);
const pdfs = (config: object = {}) =>
  pdfFetcher.create(configOf(pdfFetcher, { rate_limit: 50, ...config }), kit.resources);
const run = async (handler: ReturnType<typeof scraper>, payload: Record<string, unknown>) =>
  collectOutputs(await handler(payload, kit.context()));

describe('sitemap_parser on the test site', () => {
  const pageUrls = (base: string) => [
    `${base}/articles/getting-started.html`,
    `${base}/articles/pipelines.html`,
    `${base}/articles/norsk-veiledning.html`,
    `${base}/missing-page`,
    `${base}/private/secret.html`,
    `${base}/redirect/start`,
    `${base}/legacy/latin1.html`,
    `${base}/throttled/page`,
    // The nested index is read one level later (breadth first).
    `${base}/articles/pdf-links.html`,
    `${base}/js/rendered.html`,
  ];

  it('follows robots.txt Sitemap lines, nested indexes, .gz files and gzip encoding, deduplicating', async () => {
    const [output] = await run(sitemaps(), { url: `${site.baseUrl}/robots.txt` });
    expect(output?.payload.urls).toEqual(pageUrls(site.baseUrl));
    expect(output?.metadata?.sitemap).toMatchObject({
      sitemaps_read: 6,
      urls_found: 11,
      urls_emitted: 10,
      truncated: false,
    });
  });

  it('applies include/exclude, max_urls and max_depth', async () => {
    const [filtered] = await run(sitemaps({ include: ['/articles/'], exclude: ['norsk'] }), {
      url: `${site.baseUrl}/sitemap_index.xml`,
    });
    expect(filtered?.payload.urls).toEqual([
      `${site.baseUrl}/articles/getting-started.html`,
      `${site.baseUrl}/articles/pipelines.html`,
      `${site.baseUrl}/articles/pdf-links.html`,
    ]);
    const [capped] = await run(sitemaps({ max_urls: 2 }), { url: `${site.baseUrl}/sitemap_index.xml` });
    expect(capped?.payload.urls).toHaveLength(2);
    expect(capped?.metadata?.sitemap).toMatchObject({ truncated: true });
    await expect(
      run(sitemaps({ max_depth: 1 }), { url: `${site.baseUrl}/sitemap_index.xml` }),
    ).rejects.toThrow(/nested-index\.xml is a sitemap index below max_depth \(1\)/);
  });

  it('fails clearly on malformed XML, XML bombs, external entities, foreign XML and oversized files', async () => {
    const cases: Array<[string, RegExp, object?]> = [
      ['/sitemaps/broken.xml', /broken\.xml is not a usable sitemap: element <loc> is not closed/],
      ['/sitemaps/bomb.xml', /bomb\.xml is not a usable sitemap: it has a DOCTYPE declaration/],
      ['/sitemaps/external-entity.xml', /DOCTYPE declaration; DTDs and entities are refused/],
      ['/sitemaps/not-a-sitemap.xml', /root element is <rss>/],
      ['/sitemaps/huge.xml', /body over the limit of 524288 bytes/, { max_sitemap_size_mb: 0.5 }],
      [
        '/sitemaps/gzip-bomb.xml.gz',
        /decompresses to more than the limit of 1048576 bytes/,
        { max_sitemap_size_mb: 1 },
      ],
      ['/articles/getting-started.html', /getting-started\.html is not a usable sitemap: it is an HTML page/],
    ];
    for (const [path, message, config] of cases) {
      await expect(run(sitemaps(config), { url: `${site.baseUrl}${path}` }), path).rejects.toThrow(message);
    }
  });

  it('ends a sitemap loop once each file is read, and skips a missing top-level sitemap', async () => {
    // The loop lists no page: the message is skipped with the counts as its reason (an `empty`
    // run that says why, docs/engine.md "Outcomes"), not passed on as an empty list.
    const loop = run(sitemaps({ max_depth: 10 }), { url: `${site.baseUrl}/sitemaps/loop-a.xml` });
    await expect(loop).rejects.toBeInstanceOf(MessageSkipped);
    await expect(loop).rejects.toThrow(/loop-a\.xml: no page URL to fetch \(2 sitemaps read, 0 URLs found/);
    await expect(run(sitemaps(), { url: `${site.baseUrl}/missing-page` })).rejects.toBeInstanceOf(
      MessageSkipped,
    );
  });
});

describe('web_scraper on the test site', () => {
  it('fetches a page with status, lower-cased headers and the decoded HTML', async () => {
    const [output] = await run(scraper(), { url: `${site.baseUrl}/articles/norsk-veiledning.html` });
    expect(output?.payload).toMatchObject({
      url: `${site.baseUrl}/articles/norsk-veiledning.html`,
      status: 200,
      headers: { 'content-type': 'text/html; charset=utf-8' },
    });
    expect(output?.payload.html).toContain('Kom i gang med innsamling av nettsider');
    expect(Object.keys(output?.payload.headers as object).every((name) => name === name.toLowerCase())).toBe(
      true,
    );
  });

  it('decodes windows-1252 by Content-Type and ISO-8859-1 by http-equiv meta', async () => {
    const [legacy] = await run(scraper(), { url: `${site.baseUrl}/legacy/latin1.html` });
    expect(legacy?.payload.html).toContain('\u201cSm\u00f8rbr\u00f8d\u201d costs \u20ac12 \u2014 na\u00efve');
    expect(legacy?.metadata).toMatchObject({ charset: 'windows-1252' });
    const [meta] = await run(scraper(), { url: `${site.baseUrl}/legacy/meta-charset.html` });
    expect(meta?.payload.html).toContain('Bl\u00e5b\u00e6rsyltet\u00f8y');
  });

  it('follows redirects to the final URL, bounded, re-checking robots on each hop', async () => {
    const [output] = await run(scraper(), { url: `${site.baseUrl}/redirect/start` });
    expect(output?.payload.url).toBe(`${site.baseUrl}/articles/getting-started.html`);
    expect(output?.metadata).toMatchObject({ requested_url: `${site.baseUrl}/redirect/start` });
    await expect(run(scraper(), { url: `${site.baseUrl}/redirect/loop` })).rejects.toThrow(
      /more than 5 redirects/,
    );
    const skipped = run(scraper(), { url: `${site.baseUrl}/redirect/to-private` });
    await expect(skipped).rejects.toBeInstanceOf(MessageSkipped);
    await expect(skipped).rejects.toThrow(
      /private\/secret\.html is disallowed by .*robots\.txt \(Disallow: \/private\/\)/,
    );
  });

  it('obeys robots.txt unless told not to, without ever requesting a disallowed page', async () => {
    const before = site.requests.filter((path) => path === '/private/secret.html').length;
    await expect(run(scraper(), { url: `${site.baseUrl}/private/secret.html` })).rejects.toBeInstanceOf(
      MessageSkipped,
    );
    expect(site.requests.filter((path) => path === '/private/secret.html').length).toBe(before);
    const [output] = await run(scraper({ obey_robots: false }), {
      url: `${site.baseUrl}/private/secret.html`,
    });
    expect(output?.payload.html).toContain('Staff only');
    const userAgent = scraper({ user_agent: 'BadBot/1.0' });
    await expect(run(userAgent, { url: `${site.baseUrl}/articles/pipelines.html` })).rejects.toThrow(
      /Disallow: \//,
    );
  });

  it('skips 404 and 410, fails other 4xx and persistent 5xx with the status', async () => {
    await expect(run(scraper(), { url: `${site.baseUrl}/missing-page` })).rejects.toBeInstanceOf(
      MessageSkipped,
    );
    await expect(run(scraper(), { url: `${site.baseUrl}/gone` })).rejects.toThrow(/answered 410/);
    await expect(run(scraper(), { url: `${site.baseUrl}/forbidden` })).rejects.toThrow(
      /forbidden answered 403/,
    );
    const errors = site.requests.filter((path) => path === '/server-error').length;
    await expect(run(scraper({ max_retries: 1 }), { url: `${site.baseUrl}/server-error` })).rejects.toThrow(
      /answered 500 after the allowed retries/,
    );
    expect(site.requests.filter((path) => path === '/server-error').length - errors).toBe(2);
  });

  it('waits out a 429 Retry-After, slows the host down, then succeeds', async () => {
    const handler = scraper({ rate_limit: 20 });
    const started = Date.now();
    const [output] = await run(handler, { url: `${site.baseUrl}/throttled/scraper` });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(output?.payload.html).toContain('Served on attempt 2');
    const host = new URL(site.baseUrl).host;
    const state = httpHostStates().find(
      (entry) => entry.limiter === 'web_scraper' && entry.host === host && entry.throttled === 1,
    );
    expect(state).toMatchObject({ base_rate: 20, current_rate: 10 });
  });

  it('fails oversized pages (declared or streamed), binary served as HTML, PDFs and slow answers', async () => {
    await expect(
      run(scraper({ max_body_size_mb: 0.1 }), { url: `${site.baseUrl}/large.html` }),
    ).rejects.toThrow(/large\.html: body over the limit of 104857 bytes \(declares/);
    await expect(
      run(scraper({ max_body_size_mb: 0.1 }), { url: `${site.baseUrl}/large-chunked.html` }),
    ).rejects.toThrow(/body over the limit of 104857 bytes \(sent more/);
    await expect(run(scraper(), { url: `${site.baseUrl}/binary.html` })).rejects.toThrow(
      /binary data served as text\/html \(NUL bytes found\)/,
    );
    await expect(run(scraper(), { url: `${site.baseUrl}/downloads/sample.pdf` })).rejects.toThrow(
      /is application\/pdf, not an HTML page \(route PDFs to pdf_fetcher\)/,
    );
    await expect(
      run(scraper({ request_timeout: 0.3, max_retries: 0 }), { url: `${site.baseUrl}/slow` }),
    ).rejects.toThrow(/slow: no complete answer within 300 ms/);
  });

  it('fails clearly when nothing listens', async () => {
    const closed = await startTestSite();
    await closed.close();
    await expect(run(scraper(), { url: `${closed.baseUrl}/page` })).rejects.toThrow(
      /page not fetched: robots.txt is unreachable \(.*robots.txt: ECONNREFUSED\)/,
    );
    await expect(run(scraper({ obey_robots: false }), { url: `${closed.baseUrl}/page` })).rejects.toThrow(
      /page: ECONNREFUSED/,
    );
  });
});

describe('pdf_fetcher on the test site', () => {
  it('stores a PDF under the URL hash and emits its storage key', async () => {
    const url = `${site.baseUrl}/downloads/sample.pdf`;
    const [output] = await run(pdfs(), { url });
    const key = output?.payload.storage_key as string;
    expect(output?.payload).toEqual({
      storage_key: key,
      url,
      content_length: SAMPLE_PDF.length,
      content_type: 'application/pdf',
    });
    expect(key).toMatch(/[0-9a-f]{64}\.pdf$/);
    expect((await kit.storage.get(key)).equals(SAMPLE_PDF)).toBe(true);
    expect((await kit.storage.stat(key))?.metadata).toMatchObject({ url });
  });

  it('refuses a body that is not a PDF, one over max_pdf_size_mb, and skips a 404', async () => {
    await expect(run(pdfs(), { url: `${site.baseUrl}/downloads/fake.pdf` })).rejects.toThrow(
      /is not a PDF: the body does not start with %PDF-/,
    );
    await expect(
      run(pdfs({ max_pdf_size_mb: 1 }), { url: `${site.baseUrl}/downloads/huge.pdf` }),
    ).rejects.toThrow(/over the limit of 1048576 bytes/);
    await expect(run(pdfs(), { url: `${site.baseUrl}/files/none.pdf` })).rejects.toBeInstanceOf(
      MessageSkipped,
    );
  });
});

const pipelineYaml = (baseUrl: string) => `
name: site-ingest
init_message:
  payload: { url: "${baseUrl}/robots.txt" }
routes:
  - id: discover
    adapters:
      - type: sitemap_parser
        config: { rate_limit: 50, exclude: ["/js/", "/throttled/"] }
      - type: url_expander
        destination: pages
  - id: pages
    adapters:
      - type: web_scraper
        config: { rate_limit: 50 }
        concurrency: 4
        retry: { max_attempts: 1 }
      - type: web_content_storage
`;

describe.each(databaseTargets())('site ingestion pipeline on $name', (target) => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await createTestEngine(target, { settings: LOOPBACK_FETCH });
  });
  afterAll(async () => {
    await engine?.close();
  });

  it('stores every fetchable page with its sidecar and records the 404 and the robots refusal as skipped', async () => {
    const config = await engine.configs.create({ config_yaml: pipelineYaml(site.baseUrl) });
    const execution = await engine.orchestrator.run(config.id);
    await waitForStatus(engine.repository, execution.id, 'completed', 30_000);
    const objects = (await engine.storage.list({ prefix: `${execution.id}/web_content_storage/` })).objects;
    const urls = objects.map((object) => object.metadata.url).sort();
    // redirect/start lands on getting-started.html: the same URL, so the same object.
    expect(urls).toEqual(
      [
        '/articles/getting-started.html',
        '/articles/norsk-veiledning.html',
        '/articles/pdf-links.html',
        '/articles/pipelines.html',
        '/legacy/latin1.html',
      ].map((path) => `${site.baseUrl}${path}`),
    );
    const norsk = objects.find((object) => (object.metadata.url as string).endsWith('norsk-veiledning.html'));
    expect(norsk).toMatchObject({
      content_type: 'text/html; charset=utf-8',
      metadata: {
        status: 200,
        stage: 'web_content_storage',
        headers: { 'content-type': 'text/html; charset=utf-8' },
      },
    });
    expect((await engine.storage.get(norsk?.key as string)).toString('utf8')).toContain('Weir-håndboken');
    const lineage = (await engine.repository.lineage({ execution_id: execution.id, limit: 1000, offset: 0 }))
      .messages;
    const skipped = lineage.filter((row) => row.status === 'skipped').map((row) => row.error);
    expect(skipped.sort()).toEqual([
      `${site.baseUrl}/missing-page answered 404`,
      `${site.baseUrl}/private/secret.html is disallowed by ${site.baseUrl}/robots.txt (Disallow: /private/)`,
    ]);
    expect(lineage.filter((row) => row.status === 'failed')).toEqual([]);
    // The run message (sitemap_parser), url_expander's input, 6 of 8 fetches, 6 stored pages.
    expect(lineage.filter((row) => row.status === 'completed').length).toBe(1 + 1 + 6 + 6);
  });
});

describe('web_crawler in Chromium on the test site', needsChromium, () => {
  // Imported here so the other tests do not load playwright-core.
  const crawlerModule = import('../src/adapters/web/web-crawler.js');
  const browserModule = import('../src/browser/chromium.js');
  const crawler = async (config: object = {}) =>
    (await crawlerModule).webCrawler.create(
      configOf((await crawlerModule).webCrawler, { rate_limit: 50, pdf_destination: 'pdfs', ...config }),
      kit.resources,
    );
  afterAll(async () => {
    const { closeBrowser, browserRunning } = await browserModule;
    await closeBrowser();
    expect(browserRunning()).toBe(false);
  });

  it('renders a page whose content only JavaScript produces, and fans its PDF link out', async () => {
    const outputs = await run(await crawler({ wait_for_selector: '#rendered-article' }), {
      url: `${site.baseUrl}/js/rendered.html`,
    });
    const [page, ...pdfLinks] = outputs;
    expect(page?.destination).toBeUndefined();
    expect(page?.payload).toMatchObject({ url: `${site.baseUrl}/js/rendered.html`, status: 200 });
    expect(page?.payload.html).toContain(
      'A plain HTTP fetch only sees a loading spinner; a real browser sees this text.',
    );
    expect((page?.payload.headers as Record<string, string>)['content-type']).toBe(
      'text/html; charset=utf-8',
    );
    expect(pdfLinks).toEqual([
      { payload: { url: `${site.baseUrl}/downloads/sample.pdf` }, destination: 'pdfs' },
    ]);
    // The plain scraper sees only the spinner.
    const [plain] = await run(scraper(), { url: `${site.baseUrl}/js/rendered.html` });
    expect(plain?.payload.html).not.toContain('real browser sees this text');
  });

  it('fans out same-host .pdf links and routes a URL served as application/pdf to pdf_destination', async () => {
    const outputs = await run(await crawler(), { url: `${site.baseUrl}/articles/pdf-links.html` });
    expect(outputs.slice(1).map((output) => output.payload.url)).toContain(
      `${site.baseUrl}/downloads/sample.pdf`,
    );
    expect(outputs.slice(1).some((output) => String(output.payload.url).includes('elsewhere.invalid'))).toBe(
      false,
    );
    expect(outputs.slice(1).every((output) => output.destination === 'pdfs')).toBe(true);
    const served = await run(await crawler(), { url: `${site.baseUrl}/documents/annual-report` });
    expect(served).toEqual([
      { payload: { url: `${site.baseUrl}/documents/annual-report` }, destination: 'pdfs' },
    ]);
  });

  it('follows same-host links once per execution, within depth, page and pattern limits', async () => {
    const claims = memoryClaims();
    const crawl = async (handler: Awaited<ReturnType<typeof crawler>>, url: string, depth?: number) =>
      collectOutputs(
        await handler(
          { url, ...(depth === undefined ? {} : { depth }) },
          kit.context({ routeId: 'crawl', claims }),
        ),
      );
    const handler = await crawler({ follow_links: true, max_depth: 2, exclude: ['/privacy$', '/contact$'] });
    const links = (outputs: Awaited<ReturnType<typeof crawl>>) =>
      outputs.filter((output) => output.destination === 'crawl').map((output) => output.payload);
    const first = await crawl(handler, `${site.baseUrl}/articles/getting-started.html`);
    expect(first[0]?.payload).toMatchObject({
      url: `${site.baseUrl}/articles/getting-started.html`,
      status: 200,
    });
    expect(links(first)).toEqual(
      expect.arrayContaining([
        { url: `${site.baseUrl}/articles/pipelines.html`, depth: 1 },
        { url: `${site.baseUrl}/articles/norsk-veiledning.html`, depth: 1 },
        { url: `${site.baseUrl}/articles/pdf-links.html`, depth: 1 },
        { url: `${site.baseUrl}/`, depth: 1 },
      ]),
    );
    // Not itself (already claimed), not the excluded pages, not another host.
    expect(links(first)).toHaveLength(4);
    // Its links lead back to pages already claimed: nothing new.
    expect(links(await crawl(handler, `${site.baseUrl}/articles/pipelines.html`, 1))).toEqual([]);
    // At the depth limit the page is fetched, its links are not followed.
    const deepest = await crawl(handler, `${site.baseUrl}/articles/pdf-links.html`, 2);
    expect(deepest[0]?.payload).toMatchObject({ status: 200 });
    expect(links(deepest)).toEqual([]);
    // max_pages counts every page claimed in the execution.
    const capped = await crawler({ follow_links: true, max_pages: 2 });
    const fresh = memoryClaims();
    const outputs = collectOutputs(
      await capped(
        { url: `${site.baseUrl}/articles/getting-started.html` },
        kit.context({ routeId: 'crawl', claims: fresh }),
      ),
    );
    expect(links(await outputs)).toHaveLength(1);
  });

  it('skips 404 and robots-disallowed pages (redirect hops included) and waits out a 429', async () => {
    const handler = await crawler();
    await expect(run(handler, { url: `${site.baseUrl}/missing-page` })).rejects.toBeInstanceOf(
      MessageSkipped,
    );
    const before = site.requests.filter((path) => path === '/private/secret.html').length;
    await expect(run(handler, { url: `${site.baseUrl}/redirect/to-private` })).rejects.toThrow(
      /disallowed by .*robots\.txt/,
    );
    expect(site.requests.filter((path) => path === '/private/secret.html').length).toBe(before);
    const started = Date.now();
    const [page] = await run(handler, { url: `${site.baseUrl}/throttled/crawler` });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(page?.payload).toMatchObject({ status: 200 });
  });
});
