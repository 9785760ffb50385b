import type { Static, TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdapterDefinition } from '../adapter.js';
import { type AdapterTestKit, collectOutputs, createAdapterTestKit } from '../adapter-testing.js';
import { htmlToMarkdown } from './html-to-markdown.js';
import { markdownStorageWriter } from './markdown-storage-writer.js';
import { segmentPublisher } from './segment-publisher.js';
import { segmentStorage } from './segment-storage.js';
import { smartSegmenter } from './smart-segmenter.js';
import { storageRetriever } from './storage-retriever.js';

let kit: AdapterTestKit;
beforeAll(async () => {
  kit = await createAdapterTestKit({ withDatabase: true });
});
afterAll(async () => {
  await kit.close();
});

/** The config a pipeline step would get: schema defaults filled in, then checked. */
function configOf<Config extends TSchema>(
  definition: AdapterDefinition<Config>,
  given: object = {},
): Static<Config> {
  const config = Value.Default(definition.config, structuredClone(given)) as Static<Config>;
  const errors = [...Value.Errors(definition.config, config)];
  if (errors.length > 0)
    throw new Error(errors.map((error) => `${error.instancePath} ${error.message}`).join('; '));
  return config;
}

async function run<Config extends TSchema>(
  definition: AdapterDefinition<Config>,
  payload: Record<string, unknown>,
  options: { config?: object; metadata?: Record<string, unknown>; destination?: string } = {},
) {
  const handler = definition.create(configOf(definition, options.config), kit.resources);
  return collectOutputs(
    await handler(
      payload,
      kit.context({
        stage: definition.type,
        metadata: options.metadata ?? {},
        ...(options.destination ? { destination: options.destination } : {}),
      }),
    ),
  );
}

const document = {
  source_key: 'https://docs.example.org/vacuum',
  url: 'https://docs.example.org/vacuum',
  title: 'Vacuum',
  language: 'english',
};
const html =
  '<html lang="en"><head><title>Vacuum</title></head><body><nav>menu</nav><main><h1>Vacuum</h1><p>VACUUM reclaims storage occupied by dead tuples.</p></main></body></html>';

describe('storage_retriever', () => {
  it('reads an object by storage_key or object_key, decoding its declared charset', async () => {
    const latin1 = Buffer.from('<p>Blåbærsyltetøy</p>', 'latin1');
    const info = await kit.storage.put('exec/web/page.html', latin1, {
      contentType: 'text/html; charset=iso-8859-1',
      metadata: { url: 'https://example.no/side' },
    });
    const [byKey] = await run(storageRetriever, { storage_key: info.key });
    expect(byKey?.payload).toEqual({
      html: '<p>Blåbærsyltetøy</p>',
      source_key: info.key,
      source_url: 'https://example.no/side',
    });
    const [replayed] = await run(storageRetriever, { object_key: info.key, url: 'https://example.no/other' });
    expect(replayed?.payload.source_url).toBe('https://example.no/other');
  });

  it('refuses binary, oversized and missing objects with clear messages', async () => {
    await kit.storage.put('exec/web/image.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0]), {
      contentType: 'image/png',
    });
    await expect(run(storageRetriever, { storage_key: 'exec/web/image.png' })).rejects.toThrow(
      /image\/png, not HTML/,
    );
    await kit.storage.put('exec/web/blob.html', Buffer.from([0x3c, 0, 1, 2, 3, 0, 0]), {
      contentType: 'text/html',
    });
    await expect(run(storageRetriever, { storage_key: 'exec/web/blob.html' })).rejects.toThrow(
      /binary, not HTML/,
    );
    await kit.storage.put('exec/web/big.html', 'x'.repeat(2 * 1024 * 1024), { contentType: 'text/html' });
    await expect(
      run(storageRetriever, { storage_key: 'exec/web/big.html' }, { config: { max_object_mb: 1 } }),
    ).rejects.toThrow(/over max_object_mb/);
    await expect(run(storageRetriever, { storage_key: 'exec/web/none.html' })).rejects.toThrow(
      /does not exist/,
    );
    await expect(run(storageRetriever, {})).rejects.toThrow(/needs `storage_key`/);
  });
});

describe('html_to_markdown', () => {
  it('emits markdown and front matter and sets metadata.document', async () => {
    const [output] = await run(htmlToMarkdown, {
      html,
      source_key: 'exec/web/page.html',
      source_url: document.url,
    });
    expect(output?.payload).toEqual({
      markdown: '# Vacuum\n\nVACUUM reclaims storage occupied by dead tuples.\n',
      front_matter: { title: 'Vacuum', url: document.url, language: 'en', description: '' },
    });
    // storage_key: the stored page read, what a citation opens when the URL is not http(s) (issue 31).
    expect(output?.metadata).toEqual({ document: { ...document, storage_key: 'exec/web/page.html' } });
  });

  it('names a page without a URL by its object key, and honours a configured language', async () => {
    const [output] = await run(
      htmlToMarkdown,
      { html: '<p>Det er en bil og den er rød.</p>', source_key: 'exec/web/a.html' },
      { config: { language: 'nb' } },
    );
    expect(output?.metadata?.document).toEqual({
      source_key: 'exec/web/a.html',
      url: null,
      title: null,
      language: 'norwegian',
      storage_key: 'exec/web/a.html',
    });
    expect((output?.payload.front_matter as { language: string }).language).toBe('nb');
  });

  it('takes a language folder in the URL as the declared language of a page without <html lang>', async () => {
    // Danish text: ELD scores it in its Norwegian/Danish group, and without a declared language
    // the group's first (Norwegian) wins; under /da/ the page is Danish.
    const danish =
      '<p>Værktøjet gør farverne i billedet lysere eller mørkere, hvor du maler med penslen. Det er ikke muligt at fortryde handlingen, når billedet er gemt, og derfor skal du tænke dig om, før du gemmer.</p>';
    const languageAt = async (url: string) =>
      (
        (await run(htmlToMarkdown, { html: danish, source_url: url }))[0]?.metadata?.document as {
          language: string;
        }
      ).language;
    expect(await languageAt('http://127.0.0.1/help/da/dodge.html')).toBe('danish');
    expect(await languageAt('http://127.0.0.1/help/dodge.html')).toBe('norwegian');
  });

  it('fails clearly on oversized, binary or missing input, and refuses an unknown language at creation', async () => {
    await expect(
      run(
        htmlToMarkdown,
        { html: 'x'.repeat(1_100_000), url: 'https://a.example' },
        { config: { max_html_mb: 1 } },
      ),
    ).rejects.toThrow(/over max_html_mb/);
    await expect(
      run(htmlToMarkdown, { html: '\u0000\u0001binary', url: 'https://a.example' }),
    ).rejects.toThrow(/binary/);
    await expect(run(htmlToMarkdown, { url: 'https://a.example' })).rejects.toThrow(/needs an `html` string/);
    expect(() =>
      htmlToMarkdown.create(configOf(htmlToMarkdown, { language: 'klingon' }), kit.resources),
    ).toThrow(/not a supported language/);
  });
});

describe('smart_segmenter and segment_publisher', () => {
  it('segments markdown and fans out one message per segment to the destination', async () => {
    const markdown = '# Guide\n\nIntro.\n\n## Install\n\nRun it.';
    const [segmented] = await run(smartSegmenter, { markdown }, { config: { min_tokens: 0 } });
    const segments = segmented?.payload.segments as { heading_path: string[] }[];
    expect(segments.map((segment) => segment.heading_path)).toEqual([['Guide'], ['Guide', 'Install']]);
    const published = await run(segmentPublisher, { segments }, { destination: 'embed' });
    expect(published).toEqual([
      { payload: { segment: segments[0], segment_index: 0, total: 2 }, destination: 'embed' },
      { payload: { segment: segments[1], segment_index: 1, total: 2 }, destination: 'embed' },
    ]);
  });

  it('rejects inconsistent sizes and bad input', async () => {
    expect(() =>
      smartSegmenter.create(
        configOf(smartSegmenter, { max_tokens: 100, overlap_tokens: 100 }),
        kit.resources,
      ),
    ).toThrow(/overlap_tokens \(100\) must be below max_tokens/);
    expect(() => configOf(smartSegmenter, { max_tokens: 2 })).toThrow(/max_tokens/);
    await expect(run(smartSegmenter, {})).rejects.toThrow(/needs `markdown`/);
    await expect(run(segmentPublisher, { segments: 'nope' })).rejects.toThrow(/needs a `segments` array/);
  });
});

describe('markdown_storage_writer, then smart_segmenter by key, then segment_storage', () => {
  it('stores the markdown with a YAML header, indexes segments, and re-running replaces them', async () => {
    const markdown = '# Vacuum\n\nVACUUM reclaims storage.\n\n## Options\n\nFULL rewrites the table.';
    const front_matter = { title: 'Vacuum', url: document.url, language: 'en', description: 'About vacuum' };
    const [written] = await run(
      markdownStorageWriter,
      { markdown, front_matter },
      { config: { segmenter: { min_tokens: 0 } }, metadata: { document } },
    );
    const key = written?.payload.storage_key as string;
    expect(key).toMatch(/^00000000-0000-7000-8000-0000000000e1\/markdown_storage_writer\/[0-9a-f]{24}\.md$/);
    expect(written?.payload.segment_count).toBe(2);
    expect(written?.metadata).toEqual({ document: { ...document, storage_key: key } });
    const stored = (await kit.storage.get(key)).toString('utf8');
    expect(stored).toBe(
      `---\ntitle: Vacuum\nurl: ${document.url}\nlanguage: en\ndescription: About vacuum\n---\n\n${markdown}`,
    );
    expect((await kit.storage.stat(key))?.content_type).toBe('text/markdown; charset=utf-8');

    const [segmented] = await run(smartSegmenter, { storage_key: key }, { config: { min_tokens: 0 } });
    const segments = segmented?.payload.segments as unknown[];
    expect(segments).toHaveLength(2);
    const metadata = { document: { ...document, storage_key: key } };
    const [indexed] = await run(segmentStorage, { segments }, { metadata });
    expect(indexed?.payload.segment_count).toBe(2);
    const json = JSON.parse((await kit.storage.get(indexed?.payload.storage_key as string)).toString('utf8'));
    expect(json.segments).toEqual(segments);

    const db = kit.database?.db;
    if (!db) throw new Error('no database');
    const rows = await db
      .selectFrom('knowledge_segments')
      .select(['segment_index', 'heading_path'])
      .orderBy('segment_index')
      .execute();
    expect(rows.map((row) => row.segment_index)).toEqual([0, 1]);
    const [documentRow] = await db.selectFrom('knowledge_documents').selectAll().execute();
    expect(documentRow).toMatchObject({
      source_key: document.url,
      title: 'Vacuum',
      language: 'english',
      storage_key: key,
    });

    // The page got shorter: one segment left, the old tail removed.
    await run(segmentStorage, { segments: segments.slice(0, 1) }, { metadata });
    expect(await db.selectFrom('knowledge_segments').select('segment_index').execute()).toEqual([
      { segment_index: 0 },
    ]);
    expect(await db.selectFrom('knowledge_documents').select('document_id').execute()).toHaveLength(1);
  });

  it('carries the declared translations from html_to_markdown to the index, which keys the page by them', async () => {
    const url = 'https://docs.example.org/help/export.html?lang=nb';
    const page = `<html lang="nb"><head><title>Eksport</title>
      <link rel="alternate" hreflang="nb" href="/help/export.html?lang=nb">
      <link rel="alternate" hreflang="en" href="/help/export.html"></head>
      <body><main><h1>Eksport</h1><p>Eksporter bildet som en PNG fil med kommandoen eksporter i menyen.</p></main></body></html>`;
    const [converted] = await run(htmlToMarkdown, { html: page, source_url: url });
    const alternates = { nb: url, en: 'https://docs.example.org/help/export.html' };
    expect((converted?.metadata?.document as { alternates?: unknown }).alternates).toEqual(alternates);
    // From web_scraper, the HTTP Link header's alternates join the head's.
    const [scraped] = await run(htmlToMarkdown, {
      html: page,
      url,
      status: 200,
      headers: { link: '</hjelp/eksport.html>; rel="alternate"; hreflang="da"' },
    });
    expect((scraped?.metadata?.document as { alternates?: unknown }).alternates).toEqual({
      ...alternates,
      da: 'https://docs.example.org/hjelp/eksport.html',
    });
    const [written] = await run(markdownStorageWriter, converted?.payload ?? {}, {
      config: { segmenter: { min_tokens: 0 } },
      metadata: converted?.metadata ?? {},
    });
    expect((written?.metadata?.document as { alternates?: unknown }).alternates).toEqual(alternates);
    const [segmented] = await run(
      smartSegmenter,
      { storage_key: written?.payload.storage_key },
      { config: { min_tokens: 0 } },
    );
    await run(
      segmentStorage,
      { segments: segmented?.payload.segments },
      { metadata: written?.metadata ?? {} },
    );
    const row = await kit.database?.db
      .selectFrom('knowledge_documents')
      .select(['page_key', 'page_language'])
      .where('url', '=', url)
      .executeTakeFirst();
    expect(row).toEqual({
      page_key: 'https://docs.example.org/help/export.html',
      page_language: 'norwegian',
    });
  });

  it('keeps an existing object when overwrite is false, and needs metadata.document', async () => {
    const config = { path_template: 'fixed/{slug}.md', overwrite: false, include_front_matter: false };
    const first = await run(markdownStorageWriter, { markdown: 'first' }, { config, metadata: { document } });
    const second = await run(
      markdownStorageWriter,
      { markdown: 'second' },
      { config, metadata: { document } },
    );
    expect(second[0]?.payload.storage_key).toBe(first[0]?.payload.storage_key);
    expect(first[0]?.payload.storage_key).toMatch(/\/fixed\/vacuum\.md$/);
    expect((await kit.storage.get(first[0]?.payload.storage_key as string)).toString()).toBe('first');
    await expect(run(markdownStorageWriter, { markdown: 'x' })).rejects.toThrow(/needs metadata.document/);
    await expect(
      run(segmentStorage, { segments: [{ text: 1 }] }, { metadata: { document } }),
    ).rejects.toThrow(/segments\[0\] is not a segment/);
  });
});
