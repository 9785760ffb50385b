/**
 * A packaged Sphinx manual, served on loopback (pages hand-written in Sphinx's shape, each with
 * the `file://` canonical link that distribution packages carry and `¶` heading permalinks),
 * ingested end to end with the stored-markdown chain of examples/public-website.yaml. Citations
 * must lead to the pages the service read, headings must hold only their words, and replaying the
 * stored markdown into a new embed route must index the same segments again (issue 23).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { databaseTargets } from './helpers/databases.js';

function sphinxPage(name: string, title: string, sections: Array<[string, string]>): string {
  const body = sections
    .map(
      ([heading, text], index) => `<section id="s${index}">
<h2>${heading}<a class="headerlink" href="#s${index}" title="Link to this heading">¶</a></h2>
<p>${text}</p>
<div class="highlight-console notranslate"><div class="highlight"><pre><span></span>$ weirctl ${name} --help</pre></div></div>
</section>`,
    )
    .join('\n');
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>${title} — Weirctl 2.1 documentation</title>
<link rel="canonical" href="file:///usr/share/doc/weirctl/html/${name}.html">
</head><body><div class="document"><div class="documentwrapper"><div class="bodywrapper">
<div class="body" role="main"><section id="top"><h1>${title}<a class="headerlink" href="#top" title="Link to this heading">¶</a></h1>
${body}</section></div></div></div>
<div class="sphinxsidebar" role="navigation"><ul><li><a href="install.html">Installing</a></li><li><a href="usage.html">Usage</a></li></ul></div>
</div></body></html>`;
}

const pages: Record<string, string> = {
  'install.html': sphinxPage('install', 'Installing weirctl', [
    [
      'From packages',
      'Install the weirctl package with your distribution package manager; it pulls in the runtime.',
    ],
    [
      'From source',
      'Build from a source tarball with make and install the binary into a directory on your PATH.',
    ],
  ]),
  'usage.html': sphinxPage('usage', 'Using weirctl', [
    [
      'Listing pipelines',
      'The list command prints every pipeline with its status and the time of its last run.',
    ],
    [
      'Retrying failed runs',
      'The retry command starts a failed run again from the stage that failed, keeping earlier outputs.',
    ],
  ]),
  'faq.html': sphinxPage('faq', 'Frequently asked questions', [
    [
      'Why is my run slow?',
      'Runs slow down when the broker is far away; keep the broker close to the workers.',
    ],
  ]),
};

async function serveManual(): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const server = http.createServer((request, response) => {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const name = (request.url ?? '/').slice(1);
    if (name === 'sitemap.xml') {
      response.writeHead(200, { 'content-type': 'application/xml' });
      response.end(
        `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${Object.keys(pages)
          .map((page) => `<url><loc>${base}/${page}</loc></url>`)
          .join('')}</urlset>`,
      );
      return;
    }
    const page = pages[name];
    response.writeHead(page ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    response.end(page ?? 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe.each(databaseTargets())('a packaged Sphinx manual on $name', (target) => {
  let test: TestApp;
  let site: { baseUrl: string; close(): Promise<void> };
  let executionId: string;

  const post = async (url: string, payload: object) =>
    (await test.app.inject({ method: 'POST', url: `/api/v1${url}`, payload })).json();
  const waitFor = async (id: string) => {
    const waited = await post(`/executions/${id}/wait`, { timeout_seconds: 60 });
    expect(waited).toMatchObject({ status: 'completed' });
    expect(waited.statistics.completed_messages).toBe(waited.statistics.total_messages);
  };

  beforeAll(async () => {
    site = await serveManual();
    // The manual is served on loopback: the fetchers' egress policy must allow it.
    test = await createTestApp(target, { settings: { fetch_allowed_cidrs: ['127.0.0.0/8'] } });
    const config = await post('/configs', {
      config_yaml: `
name: sphinx-manual
init_message: { route: discover, payload: { url: "${site.baseUrl}/sitemap.xml" } }
routes:
  - id: discover
    adapters:
      - { type: sitemap_parser, config: { rate_limit: 200 } }
      - { type: url_expander, destination: pages }
  - id: pages
    adapters:
      - { type: web_scraper, config: { rate_limit: 200 } }
      - type: web_content_storage
      - type: storage_retriever
      - type: html_to_markdown
      - type: markdown_storage_writer
      - type: smart_segmenter
      - { type: segment_publisher, destination: embed }
  - id: embed
    adapters:
      - type: embedding_generator
`,
    });
    executionId = (await post(`/configs/${config.id}/run`, {})).id;
    await waitFor(executionId);
  }, 90_000);

  afterAll(async () => {
    await test?.close();
    await site?.close();
  });

  const segmentsOf = async (execution: string) =>
    (
      await sql<{ url: string | null; heading_path: string[]; text: string; segment_index: number }>`
        select d.url, s.heading_path, s.text, s.segment_index from knowledge_segments s
        join knowledge_documents d using (document_id) where s.execution_id = ${execution}
        order by d.url, s.segment_index`.execute(test.database.db)
    ).rows;

  it('cites every page by the URL it was fetched from, not its file:// canonical', async () => {
    const segments = await segmentsOf(executionId);
    expect(new Set(segments.map((segment) => segment.url))).toEqual(
      new Set(Object.keys(pages).map((page) => `${site.baseUrl}/${page}`)),
    );
    // Keyword search: the PostgreSQL server here has no pgvector, so vector and RRF answer 503 there.
    const found = await post('/chat/search/keyword', { query: 'retry a failed run', limit: 5 });
    expect(found.results.length).toBeGreaterThan(0);
    for (const result of found.results)
      expect(result.source.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\w+\.html$/);
    expect(found.results[0].source.url).toBe(`${site.baseUrl}/usage.html`);
  });

  it('keeps only the heading words in headings and heading_path', async () => {
    const segments = await segmentsOf(executionId);
    expect(segments.length).toBeGreaterThanOrEqual(5);
    for (const segment of segments) {
      expect(segment.heading_path.join(' ')).not.toMatch(/[¶§]/);
      expect(segment.text).not.toContain('¶');
    }
    expect(segments.map((segment) => segment.heading_path.at(-1))).toContain('Retrying failed runs');
  });

  it('replaying the stored markdown into a new embed route indexes the same segments again', async () => {
    const reindex = await post('/configs', {
      config_yaml: `
name: sphinx-reindex
routes:
  - id: resegment
    adapters:
      - type: smart_segmenter
      - { type: segment_publisher, destination: reembed }
  - id: reembed
    adapters:
      - type: embedding_generator
`,
    });
    expect(reindex.id).toBeTruthy();
    const replayed = await post('/replay', {
      source_execution_id: executionId,
      source_stage: 'markdown_storage_writer',
      target_route: 'resegment',
    });
    expect(replayed).toMatchObject({ objects_found: 3, messages_published: 3 });
    await waitFor(replayed.execution_id);
    const shape = (rows: Awaited<ReturnType<typeof segmentsOf>>) =>
      rows.map((row) => [row.url, row.segment_index, row.heading_path.join(' > '), row.text]);
    // Re-ingesting a URL updates the same segment rows, now written by the replay.
    expect(shape(await segmentsOf(replayed.execution_id))).toEqual(shape(await segmentsOfAll()));
    expect((await segmentsOf(replayed.execution_id)).length).toBeGreaterThanOrEqual(5);
  });

  const segmentsOfAll = async () =>
    (
      await sql<{ url: string | null; heading_path: string[]; text: string; segment_index: number }>`
        select d.url, s.heading_path, s.text, s.segment_index from knowledge_segments s
        join knowledge_documents d using (document_id) order by d.url, s.segment_index`.execute(
        test.database.db,
      )
    ).rows;
});
