import type { TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { afterAll, describe, expect, it } from 'vitest';
import { collectOutputs, createAdapterTestKit } from '../adapter-testing.js';
import { pdfFetcher } from './pdf-fetcher.js';
import { sitemapParser } from './sitemap-parser.js';
import { parseSitemapXml } from './sitemap-xml.js';
import { urlExpander } from './url-expander.js';
import { webContentStorage } from './web-content-storage.js';
import { webScraper } from './web-scraper.js';

const kit = await createAdapterTestKit();
afterAll(() => kit.close());

const defaults = (adapter: { config: TSchema }, config: object = {}) =>
  Value.Default(adapter.config, structuredClone(config)) as never;

describe('sitemap XML reader', () => {
  it('reads urlset and sitemapindex locs, with entities, CDATA and a namespace prefix', () => {
    expect(
      parseSitemapXml(
        '<?xml version="1.0"?><urlset><url><loc> https://a.test/x?a=1&amp;b=2 </loc></url>' +
          '<url><loc><![CDATA[https://a.test/y]]></loc><image:image><image:loc>https://a.test/i.png</image:loc></image:image></url></urlset>',
        'test',
      ),
    ).toEqual({ kind: 'urlset', locs: ['https://a.test/x?a=1&b=2', 'https://a.test/y'] });
    expect(
      parseSitemapXml(
        '<sm:sitemapindex><sm:sitemap><sm:loc>https://a.test/s.xml</sm:loc></sm:sitemap></sm:sitemapindex>',
        't',
      ),
    ).toEqual({
      kind: 'sitemapindex',
      locs: ['https://a.test/s.xml'],
    });
  });

  it('refuses DTDs and entities, truncated documents and foreign roots', () => {
    const bomb =
      '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]><urlset><url><loc>&lol2;</loc></url></urlset>';
    expect(() => parseSitemapXml(bomb, 'sitemap b')).toThrow(
      /sitemap b is not a usable sitemap: it has a DOCTYPE declaration/,
    );
    expect(() => parseSitemapXml('<!ENTITY x SYSTEM "file:///etc/passwd"><urlset/>', 's')).toThrow(
      /ENTITY declaration/,
    );
    expect(() => parseSitemapXml('<urlset><url><loc>https://a.test/', 's')).toThrow(/<loc> is not closed/);
    expect(() => parseSitemapXml('<rss><channel/></rss>', 's')).toThrow(/root element is <rss>/);
    expect(() => parseSitemapXml('just text', 's')).toThrow(/text outside the root element/);
    expect(() => parseSitemapXml('', 's')).toThrow(/no root element/);
    expect(() => parseSitemapXml(`<urlset>${'<a>'.repeat(40)}${'</a>'.repeat(40)}</urlset>`, 's')).toThrow(
      /nest deeper/,
    );
  });
});

describe('config validation', () => {
  it('fills defaults and refuses out-of-range or unknown fields', () => {
    expect(Value.Check(sitemapParser.config, defaults(sitemapParser))).toBe(true);
    expect(Value.Check(sitemapParser.config, defaults(sitemapParser, { max_depth: 11 }))).toBe(false);
    expect(Value.Check(webScraper.config, defaults(webScraper, { rate_limit: 0 }))).toBe(false);
    expect(Value.Check(webScraper.config, defaults(webScraper, { follow: true }))).toBe(false);
    expect(Value.Check(pdfFetcher.config, defaults(pdfFetcher, { max_pdf_size_mb: -1 }))).toBe(false);
    expect(defaults(pdfFetcher)).toMatchObject({ max_pdf_size_mb: 50, request_timeout: 60, rate_limit: 1 });
    expect(Value.Check(urlExpander.config, defaults(urlExpander, { max_urls: 0 }))).toBe(false);
  });

  it('refuses an invalid include regex when the adapter is created', () => {
    expect(() => urlExpander.create(defaults(urlExpander, { include: ['('] }), kit.resources)).toThrow(
      /include: "\(" is not a valid regular expression/,
    );
  });
});

describe('url_expander', () => {
  it('emits one message per URL to the step destination, deduplicated, filtered and capped', async () => {
    const handler = urlExpander.create(
      defaults(urlExpander, { exclude: ['/skip'], max_urls: 3 }),
      kit.resources,
    );
    const outputs = await collectOutputs(
      await handler(
        {
          urls: [
            'https://a.test/1',
            'https://a.test/1#top',
            'ftp://a.test/file',
            'not a url',
            'https://a.test/skip/me',
            'https://a.test/2',
            'https://a.test/3',
            'https://a.test/4',
          ],
        },
        kit.context({ destination: 'fetch' }),
      ),
    );
    expect(outputs.map((output) => output.payload.url)).toEqual([
      'https://a.test/1',
      'https://a.test/2',
      'https://a.test/3',
    ]);
    expect(outputs.every((output) => output.destination === 'fetch')).toBe(true);
    expect(outputs[0]?.metadata).toEqual({ url_expander: { invalid: 2 } });
  });

  it('fails clearly on input that is not a URL list', async () => {
    const handler = urlExpander.create(defaults(urlExpander), kit.resources);
    await expect(handler({ urls: 'https://a.test' }, kit.context())).rejects.toThrow(
      /needs `urls`, an array/,
    );
    await expect(handler({ urls: [1, 2] }, kit.context())).rejects.toThrow(/needs `urls`/);
  });
});

describe('web_content_storage', () => {
  it('writes the HTML under the URL hash with url, status and kept headers in the sidecar', async () => {
    const handler = webContentStorage.create(defaults(webContentStorage), kit.resources);
    const html = '<html><body><p>bl\u00e5b\u00e6r</p></body></html>';
    const [output] = await collectOutputs(
      await handler(
        {
          url: 'https://a.test/page',
          html,
          status: 200,
          headers: { 'content-type': 'text/html', 'x-secret-header': 'nope', ETag: '"v1"' },
        },
        kit.context({ stage: 'store' }),
      ),
    );
    const key = output?.payload.storage_key as string;
    expect(key).toMatch(/\/store\/[0-9a-f]{64}\.html$/);
    expect(output?.payload).toEqual({
      storage_key: key,
      url: 'https://a.test/page',
      content_length: Buffer.byteLength(html),
    });
    expect((await kit.storage.get(key)).toString('utf8')).toBe(html);
    const info = await kit.storage.stat(key);
    expect(info?.content_type).toBe('text/html; charset=utf-8');
    expect(info?.metadata).toMatchObject({
      url: 'https://a.test/page',
      status: 200,
      headers: { 'content-type': 'text/html', etag: '"v1"' },
    });
    expect(info?.metadata.headers).not.toHaveProperty('x-secret-header');
  });

  it('fails clearly without url and html', async () => {
    const handler = webContentStorage.create(defaults(webContentStorage), kit.resources);
    await expect(handler({ url: 'https://a.test' }, kit.context())).rejects.toThrow(
      /needs `url` and `html` strings/,
    );
  });
});

describe('fetching adapters on bad input', () => {
  it('fail per message on a missing, relative or non-http URL', async () => {
    for (const adapter of [webScraper, pdfFetcher, sitemapParser]) {
      const handler = (
        adapter.create as (
          config: never,
          resources: typeof kit.resources,
        ) => ReturnType<typeof webScraper.create>
      )(defaults(adapter), kit.resources);
      await expect(handler({}, kit.context())).rejects.toThrow(/input needs a `url` string/);
      await expect(handler({ url: '/relative' }, kit.context())).rejects.toThrow(/is not an absolute URL/);
      await expect(handler({ url: 'file:///etc/passwd' }, kit.context())).rejects.toThrow(
        /not an http or https URL/,
      );
    }
  });
});
