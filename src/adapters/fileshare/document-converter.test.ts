import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Value } from 'typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePdf } from '../../../test/fixtures/documents/make-pdf.js';
import { makeZip } from '../../../test/fixtures/documents/make-zip.js';
import { readZip } from '../../documents/zip.js';
import { type AdapterTestKit, collectOutputs, createAdapterTestKit } from '../adapter-testing.js';
import { createAdapterRegistry } from '../registry.js';
import { documentConverter } from './document-converter.js';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures');
const fixture = (name: string) => readFile(path.join(fixtures, name));

let kit: AdapterTestKit;
beforeAll(async () => {
  kit = await createAdapterTestKit();
});
afterAll(async () => {
  await kit.close();
});

const defaults = Value.Default(documentConverter.config, {}) as Parameters<
  typeof documentConverter.create
>[0];

/** Stores `body` and runs the converter on `{storage_key, ...extra}`. */
async function convert(
  body: Buffer | string,
  extra: Record<string, unknown> = {},
  config: Partial<typeof defaults> = {},
  stored: { contentType?: string; metadata?: Record<string, unknown> } = {},
) {
  const key = `in/${Math.random().toString(36).slice(2)}/document`;
  await kit.storage.put(key, body, stored);
  const handler = documentConverter.create({ ...defaults, ...config }, kit.resources);
  const outputs = await collectOutputs(await handler({ storage_key: key, ...extra }, kit.context()));
  return { key, outputs, output: outputs[0] as (typeof outputs)[number] };
}

describe('document_converter: PDF', () => {
  it('rebuilds headings, paragraphs and lists from a LibreOffice PDF, with its metadata', async () => {
    const url = 'http://127.0.0.1:9/files/guide.pdf';
    const { key, output } = await convert(await fixture('site/files/guide.pdf'), {
      url,
      content_type: 'application/pdf',
    });
    const markdown = output.payload.markdown as string;
    expect(markdown.split('\n\n').slice(0, 3)).toEqual([
      '# Weir Field Guide',
      'This guide explains how content pipelines move documents from a source into the knowledge index. Every stage writes its output to storage, so any step can be replayed later.',
      '## Installing the service',
    ]);
    expect(markdown).toContain(
      '- The sitemap parser finds the pages of a site.\n- The scraper fetches each page with adaptive rate limiting.\n',
    );
    // Page 2 starts with a level-2 heading; its level-3 headings follow.
    expect(markdown).toMatch(
      /\n## Searching what was indexed\n\nSegments are indexed .+\n\n### Keyword search\n/,
    );
    expect(output.payload.front_matter).toEqual({
      title: 'Weir Field Guide',
      url,
      language: 'en',
      description: '',
      document_type: 'pdf',
      page_count: 2,
    });
    expect(output.metadata).toEqual({
      // storage_key: the stored original, what a citation opens (issue 31).
      document: { source_key: url, url, title: 'Weir Field Guide', language: 'english', storage_key: key },
    });
  });

  it('detects the language from the text when the PDF declares its tool’s locale', async () => {
    // report.pdf is Norwegian but LibreOffice stamped it /Lang (en-US).
    const { output } = await convert(await fixture('site/files/report.pdf'));
    expect(output.payload.markdown).toMatch(/^# Årsrapport 2024\n\nDenne rapporten oppsummerer/);
    expect(output.payload.front_matter).toMatchObject({
      title: 'Årsrapport 2024',
      language: 'no',
      page_count: 1,
    });
    expect(output.metadata?.document).toMatchObject({ language: 'norwegian' });
  });

  it('uses the configured language only when the text does not tell confidently', async () => {
    const { output } = await convert(await fixture('site/files/report.pdf'), {}, { language: 'english' });
    expect(output.metadata?.document).toMatchObject({ language: 'norwegian' });
    const short = await convert(makePdf({ pages: 1, text: 'Q3 2024' }), {}, { language: 'norwegian' });
    expect(short.output.metadata?.document).toMatchObject({ language: 'norwegian' });
    expect(short.output.payload.front_matter).toMatchObject({ language: 'no' });
  });

  it('takes a language folder in the address when neither the text, the config nor the file says', async () => {
    const short = makePdf({ pages: 1, text: 'Q3 2024' });
    const inFolder = await convert(short, { url: 'http://127.0.0.1:9/manuals/da/report.pdf' });
    expect(inFolder.output.metadata?.document).toMatchObject({ language: 'danish' });
    const noFolder = await convert(short, { url: 'http://127.0.0.1:9/manuals/report.pdf' });
    expect(noFolder.output.metadata?.document).toMatchObject({ language: 'simple' });
    const configured = await convert(
      short,
      { url: 'http://127.0.0.1:9/manuals/da/report.pdf' },
      { language: 'english' },
    );
    expect(configured.output.metadata?.document).toMatchObject({ language: 'english' });
  });

  it('converts at most max_pages pages of a PDF with thousands and says so', async () => {
    const started = performance.now();
    const { output } = await convert(makePdf({ pages: 5000, text: 'Repeated page' }), {}, { max_pages: 20 });
    expect(performance.now() - started).toBeLessThan(15_000);
    expect(output.payload.front_matter).toMatchObject({ page_count: 5000, pages_converted: 20 });
    expect((output.payload.markdown as string).match(/Repeated page/g)).toHaveLength(20);
  });

  it('fails a truncated PDF clearly', async () => {
    await expect(convert(await fixture('site/files/truncated.pdf'))).rejects.toThrow(
      /^not a readable PDF: Invalid PDF structure/,
    );
  });

  it('fails a password-protected PDF clearly', async () => {
    await expect(convert(await fixture('documents/encrypted.pdf'))).rejects.toThrow(
      'PDF is encrypted with a password; it cannot be read',
    );
  });

  it('fails garbage after a PDF header clearly', async () => {
    const garbage = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(20_000, 0xa7)]);
    await expect(convert(garbage)).rejects.toThrow(/^not a readable PDF/);
  });

  it('fails a PDF without a text layer instead of emitting empty markdown', async () => {
    await expect(convert(makePdf({ text: '' }))).rejects.toThrow(/no text layer/);
  });

  it('stops a conversion over its time budget', async () => {
    await expect(convert(makePdf({ pages: 3000 }), {}, { timeout_seconds: 0.001 })).rejects.toThrow(
      /PDF conversion took longer than 1 ms/,
    );
  });
});

describe('document_converter: DOCX, HTML and text', () => {
  it('converts a Word document with headings, a numbered list and a table', async () => {
    const { key, output } = await convert(await fixture('documents/memo.docx'));
    expect(output.payload.markdown).toBe(
      [
        '# Storage Migration Memo',
        'We are moving stage outputs from the local disk to an object store. This memo lists the steps and the owners.',
        '## Steps',
        '1. Create the bucket and a service account.\n2. Copy the existing objects with their sidecars.\n3. Switch the storage setting and restart the service.',
        '## Owners',
        '| Task | Owner |\n| --- | --- |\n| Bucket | Platform team |\n| Copy | Data team |',
        'Questions go to the **platform** channel.\n',
      ].join('\n\n'),
    );
    expect(output.payload.front_matter).toEqual({
      title: 'Storage Migration Memo',
      url: '',
      language: 'en',
      description: '',
      document_type: 'docx',
    });
    // No URL anywhere: the storage key identifies the document.
    expect(output.metadata?.document).toEqual({
      source_key: key,
      url: '',
      title: 'Storage Migration Memo',
      language: 'english',
      storage_key: key,
    });
  });

  it('converts a PowerPoint deck: one section per slide, nested bullets', async () => {
    const { output } = await convert(await fixture('documents/deck.pptx'));
    expect(output.payload.markdown).toBe(
      '## Quarterly Review\n\nContent platform team\n\n## Highlights\n\n- Indexed twice as many pages\n' +
        '- Search answers in under a second\n  - Hybrid ranking helped most\n',
    );
    expect(output.payload.front_matter).toMatchObject({
      title: 'Quarterly Review',
      document_type: 'pptx',
      page_count: 2,
    });
  });

  it('takes slide titles from title placeholders, in presentation order', async () => {
    const slide = (title: string, body: string) =>
      `<p:sld><p:cSld><p:spTree><p:sp><p:nvSpPr><p:nvPr><p:ph type="body"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>${body}</a:t></a:r></a:p></p:txBody></p:sp>` +
      `<p:sp><p:nvSpPr><p:nvPr><p:ph type="title"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>${title}</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>`;
    const deck = makeZip([
      {
        name: 'ppt/presentation.xml',
        data: '<p:presentation><p:sldIdLst><p:sldId id="1" r:id="rB"/><p:sldId id="2" r:id="rA"/></p:sldIdLst></p:presentation>',
      },
      {
        name: 'ppt/_rels/presentation.xml.rels',
        data: '<Relationships><Relationship Id="rA" Target="slides/slide1.xml"/><Relationship Id="rB" Target="slides/slide2.xml"/></Relationships>',
      },
      { name: 'ppt/slides/slide1.xml', data: slide('Second', 'Later &amp; last') },
      { name: 'ppt/slides/slide2.xml', data: slide('First', 'Opening point') },
    ]);
    const { output } = await convert(deck, {}, { max_pages: 1 });
    expect(output.payload.markdown).toBe('## First\n\n- Opening point\n');
    expect(output.payload.front_matter).toMatchObject({ title: 'First', page_count: 2, pages_converted: 1 });
    const all = await convert(deck);
    expect(all.output.payload.markdown).toBe('## First\n\n- Opening point\n\n## Second\n\n- Later & last\n');
  });

  it('converts an Excel workbook: a table per sheet, header from the first row', async () => {
    const { output } = await convert(await fixture('documents/usage.xlsx'));
    expect(output.payload.markdown).toBe(
      '## usage\n\n| Team | Pages | Share |\n| --- | --- | --- |\n| Platform | 1200 | 0.6 |\n| Data | 800 | 0.4 |\n',
    );
    expect(output.payload.front_matter).toMatchObject({ document_type: 'xlsx', page_count: 1 });
  });

  it('refuses a zip bomb by the bytes it inflates, whatever the entries declare', async () => {
    const bomb = makeZip([
      { name: 'word/document.xml', data: Buffer.alloc(3 * 1024 * 1024, 0x20), declaredSize: 100 },
    ]);
    expect(bomb.length).toBeLessThan(10_000);
    await expect(convert(bomb, {}, { max_unzipped_mb: 1 })).rejects.toThrow(
      /decompresses to more than 1048576 bytes \(max_unzipped_mb\)/,
    );
  });

  it('keeps embedded media (word/media/) out of the decompression budget', async () => {
    const memo = readZip(await fixture('documents/memo.docx'), 10_000_000);
    const withImage = makeZip([
      ...[...memo].map(([name, data]) => ({ name, data })),
      { name: 'word/media/photo.png', data: Buffer.alloc(3 * 1024 * 1024, 7) },
    ]);
    const { output } = await convert(withImage, {}, { max_unzipped_mb: 1 });
    expect(output.payload.markdown).toMatch(/^# Storage Migration Memo\n/);
  });

  it('fails a truncated Word document clearly', async () => {
    const memo = await fixture('documents/memo.docx');
    await expect(convert(memo.subarray(0, 3000))).rejects.toThrow(/damaged ZIP archive/);
  });

  it('fails a ZIP that is not an Office document, and a legacy .doc', async () => {
    await expect(convert(makeZip([{ name: 'readme.txt', data: 'hi' }]))).rejects.toThrow(
      /ZIP archive is not an Office document/,
    );
    const doc = Buffer.concat([
      Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]),
      Buffer.alloc(512),
    ]);
    await expect(convert(doc)).rejects.toThrow(/legacy Office binary files/);
  });

  it('passes HTML through the HTML converter and reads the url from the sidecar of a replayed object', async () => {
    const key = 'exec/web_content_storage/page.html';
    await kit.storage.put(
      key,
      '<!DOCTYPE html><html lang="en"><head><title>Page</title></head><body><main><h1>Page</h1><p>Body text of the page here.</p></main></body></html>',
      { contentType: 'text/html', metadata: { url: 'https://example.test/page' } },
    );
    const handler = documentConverter.create(defaults, kit.resources);
    const [output] = await collectOutputs(await handler({ object_key: key }, kit.context()));
    expect(output?.payload).toEqual({
      markdown: '# Page\n\nBody text of the page here.\n',
      front_matter: {
        title: 'Page',
        url: 'https://example.test/page',
        language: 'en',
        description: '',
        document_type: 'html',
      },
    });
    expect(output?.metadata?.document).toMatchObject({ source_key: 'https://example.test/page' });
  });

  it('passes markdown through by content type and refuses binary that claims to be text', async () => {
    const { output } = await convert('# Notes\n\nSome notes.\n', {}, {}, { contentType: 'text/markdown' });
    expect(output.payload).toMatchObject({
      markdown: '# Notes\n\nSome notes.\n',
      front_matter: { title: 'Notes' },
    });
    await expect(convert(Buffer.alloc(64, 0), { content_type: 'text/plain' })).rejects.toThrow(/binary/);
  });

  it('refuses an unknown binary type, a missing object and an object over the size limit', async () => {
    await expect(
      convert(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0]), { content_type: 'image/png' }),
    ).rejects.toThrow('unsupported document type (image/png): not a PDF, DOCX, PPTX, XLSX or HTML file');
    const handler = documentConverter.create(defaults, kit.resources);
    await expect(handler({ storage_key: 'no/such/object' }, kit.context())).rejects.toThrow(
      'stored object no/such/object does not exist',
    );
    await expect(handler({}, kit.context())).rejects.toThrow(/needs `storage_key`/);
    await expect(convert(Buffer.alloc(2 * 1024 * 1024), {}, { max_document_size_mb: 1 })).rejects.toThrow(
      /over max_document_size_mb \(1\)/,
    );
  });
});

describe('document_converter config', () => {
  const registry = createAdapterRegistry([documentConverter]);

  it('fills defaults and refuses out-of-range values and unknown fields', () => {
    expect(registry.checkConfig(documentConverter, {})).toMatchObject({
      valid: true,
      config: { max_document_size_mb: 100, max_pages: 2000, max_unzipped_mb: 200, timeout_seconds: 120 },
    });
    const check = registry.checkConfig(documentConverter, {
      max_pages: 0,
      timeout_seconds: -1,
      colour: 'red',
    });
    expect(check.valid).toBe(false);
    expect(check.errors.map((error) => error.path).sort()).toEqual(['', '/max_pages', '/timeout_seconds']);
  });

  it('refuses an unknown language when created', () => {
    expect(() => documentConverter.create({ ...defaults, language: 'klingon' }, kit.resources)).toThrow(
      /language "klingon" is not a known ISO code/,
    );
  });
});
