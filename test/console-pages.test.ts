/**
 * Console pages of issue 31 in real Chromium against a running `weir serve` on the embedded
 * defaults (the example pipelines index docs/ on start): chat answers rendered as sanitised
 * markdown; the CodeMirror config editor (line numbers, YAML highlighting, a marker at each
 * finding's line, a finding's place jumping to it, parse errors of one slip collapsed, Run
 * disabled while the config is invalid); the Documents page (per config, filters, a delete that
 * takes a source out of the index); search narrowed by config, language and source. Screenshots go to a temporary directory, or to
 * docs/console/ with WEIR_WRITE_SCREENSHOTS=1 (`npm run screenshots`).
 */
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumPath, needsChromium } from './helpers/chromium.js';
import { screenshotDirectory } from './helpers/screenshots.js';
import { startWeirProcess, type WeirProcess } from './helpers/weir-process.js';

const screenshots = screenshotDirectory();

/** A valid pipeline; `slip` moves line 18 (` - type: smart_segmenter`) one column left. */
const pipeline = (segmenter = 'smart_segmenter', slip = false) => `name: editor-demo
description: Index a folder of markdown files.
init_message:
  route: list
  payload:
    root: ./docs
routes:
  - id: list
    adapters:
      - type: fileshare_enumerator
        config:
          extensions: [.md]
        destination: documents
  - id: documents
    adapters:
      - type: fileshare_fetcher
      - type: document_converter
${slip ? '     ' : '      '}- type: ${segmenter}
      - type: segment_publisher
        destination: embed
  - id: embed
    adapters:
      - type: embedding_generator
`;

/** A chat stream as the service sends it (spec 6.3), with the given answer chunks. */
function chatStream(chunks: string[]): string {
  const events = [
    ['sources', { sources: [] }],
    ...chunks.map((content) => ['text', { content }]),
    ['done', { completed: true }],
  ];
  return events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join('');
}

describe('console pages in Chromium', needsChromium, () => {
  let service: WeirProcess | undefined;
  let browser: Browser;

  beforeAll(async () => {
    service = await startWeirProcess();
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ['--no-sandbox', '--disable-gpu'],
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  it('renders a chat answer as markdown, and nothing in it runs or links to javascript:', async () => {
    const base = (service as WeirProcess).base;
    const context = await browser.newContext();
    const own = await context.newPage();
    const errors: string[] = [];
    own.on('pageerror', (error) => errors.push(error.message));
    // The answer comes from this double: what a model, or a passage it quotes, could say.
    await own.route('**/api/v1/chat/stream', (route) =>
      route.fulfill({
        headers: { 'content-type': 'text/event-stream' },
        body: chatStream([
          '## Retries\n\nDeliveries are **retried** with `backoff` [1].',
          '\n\n| attempt | delay |\n|---|---|\n| 1 | 10 s |\n',
          '\n\n<script>window.pwned = "script"</script>\n',
          '\n<img src="x" onerror="window.pwned = \'onerror\'">\n',
          '\n[a link](javascript:window.pwned="link") and [docs](https://example.com/docs).',
        ]),
      }),
    );
    await own.goto(`${base}/#/chat`);
    await own.getByLabel('Question').fill('How are deliveries retried?');
    await own.getByRole('button', { name: 'Ask' }).click();
    const answer = own.locator('.answer').first();
    await answer.locator('table').waitFor();
    expect(await answer.locator('h2').textContent()).toBe('Retries');
    expect(await answer.locator('strong').textContent()).toBe('retried');
    expect(await answer.locator('code').textContent()).toBe('backoff');
    expect(await answer.locator('td').allTextContents()).toEqual(['1', '10 s']);
    // No markdown left as text.
    expect(await answer.textContent()).not.toMatch(/\*\*|\|---|##/);
    expect(await answer.locator('script').count()).toBe(0);
    expect(await answer.locator('[onerror]').count()).toBe(0);
    expect(await answer.locator('a[href^="javascript:" i]').count()).toBe(0);
    expect(await answer.getByText('a link').evaluate((node) => node.getAttribute('href'))).toBeNull();
    const docs = answer.getByRole('link', { name: 'docs' });
    expect(await docs.getAttribute('href')).toBe('https://example.com/docs');
    expect(await docs.getAttribute('rel')).toBe('noreferrer');
    await own.waitForTimeout(300);
    expect(await own.evaluate(() => (window as unknown as { pwned?: string }).pwned)).toBeUndefined();
    expect(errors).toEqual([]);
    await context.close();
  });

  it('edits YAML in CodeMirror: numbered, highlighted, findings marked and collapsed, Run only when valid', async () => {
    const base = (service as WeirProcess).base;
    // Saved with an unknown adapter type (a config persists with its errors): it cannot run.
    const created = await fetch(`${base}/api/v1/configs`, {
      method: 'POST',
      headers: { 'content-type': 'application/yaml' },
      body: pipeline('smart_segmentr'),
    });
    const config = (await created.json()) as { id: string };
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const answer = await page.goto(`${base}/#/configs/${config.id}`);
    // The editor's style element is let in by this page's nonce, and nothing else inline.
    const nonce = /style-src 'self' 'nonce-([^']+)'/.exec(
      answer?.headers()['content-security-policy'] ?? '',
    )?.[1];
    expect(nonce).toMatch(/^[A-Za-z0-9+/=]{20,}$/);
    expect(await page.locator('meta[name="weir-style-nonce"]').getAttribute('content')).toBe(nonce);
    const editor = page.getByLabel('Pipeline YAML');
    await page.locator('.cm-lineNumbers .cm-gutterElement', { hasText: /^24$/ }).waitFor();
    // Highlighted: keys and values are spans of their own, not one run of text. The parser
    // highlights after the first paint, later on a loaded machine (CI once read 0 spans).
    await expect
      .poll(() => page.locator('.cm-line').nth(9).locator('span').count(), { timeout: 15_000 })
      .toBeGreaterThan(1);
    const run = page.getByRole('button', { name: 'Run…' });
    expect(await run.isDisabled()).toBe(true);
    // The unknown type is marked at its line, and its place in the report jumps there.
    await page.locator('.cm-lint-marker-error').first().waitFor();
    const finding = page.locator('.findings > li', { hasText: 'E202' });
    await finding.getByRole('button', { name: 'line 18, column 15' }).click();
    expect(await page.locator('.cm-activeLine').textContent()).toBe('      - type: smart_segmentr');

    // One indentation slip: its parse errors are one entry, validated as it is typed.
    await editor.fill(pipeline('smart_segmenter', true));
    const collapsed = page.locator('.findings > li', { hasText: /^\s*\d+ × E100/ });
    await collapsed.waitFor();
    expect(await page.locator('.findings > li').count()).toBe(1);
    const count = Number((await collapsed.locator('.count').textContent())?.match(/\d+/)?.[0]);
    expect(count).toBeGreaterThan(2);
    await collapsed.locator('summary').click();
    expect(await collapsed.locator('.places li').count()).toBe(count);
    expect(await run.isDisabled()).toBe(true);
    await page.screenshot({ path: path.join(screenshots, 'config-findings.png'), fullPage: true });

    await editor.fill(pipeline());
    await page.getByText('Valid: 0 errors, 0 warnings').waitFor();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved version 2.').waitFor();
    await page.waitForFunction(() => {
      const button = Array.from(document.querySelectorAll('button')).find(
        (item) => item.textContent === 'Run…',
      );
      return button && !(button as HTMLButtonElement).disabled;
    });
    await page.close();
  });

  /** The documents weir-docs indexed on start (the example runs when the service starts). */
  async function indexedDocuments(
    query = '',
  ): Promise<{ total: number; documents: { source_key: string }[] }> {
    const base = (service as WeirProcess).base;
    for (let attempt = 0; ; attempt += 1) {
      const answer = await (await fetch(`${base}/api/v1/chat/documents${query}`)).json();
      if (answer.total > 0 || attempt === 300) return answer;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  it('shows what is indexed per config and document, filters it, and deletes a source from the index', async () => {
    const base = (service as WeirProcess).base;
    const [target] = (await indexedDocuments()).documents;
    // The last part of its source (a file name, a page's path): what a person would type.
    const tail = (target?.source_key ?? '').split('/').filter(Boolean).pop() ?? '';
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${base}/#/documents`);
    const perConfig = page.getByLabel('Indexed per config');
    await perConfig.locator('tr', { hasText: 'weir-docs' }).waitFor();
    const documents = page.getByRole('table', { name: 'Documents' });
    await documents.locator('tbody tr').first().waitFor();
    await page.screenshot({ path: path.join(screenshots, 'documents.png'), fullPage: true });

    await page.getByLabel('Language').selectOption('no');
    await page.getByText('No document matches.').waitFor();
    await page.getByLabel('Language').selectOption('en');
    await page.getByLabel('Source').fill(tail);
    const row = documents.locator('tbody tr', { hasText: tail });
    await row.first().waitFor();
    await expect.poll(() => documents.locator('tbody tr').count()).toBe(await row.count());
    const key = (await row.first().locator('.muted').first().textContent()) as string;
    expect(key).toContain(tail);
    expect(Number(await row.first().locator('td').nth(3).textContent())).toBeGreaterThan(0);
    await row
      .first()
      .getByRole('button', { name: /^Delete/ })
      .click();
    await row.first().getByRole('button', { name: 'Remove from index' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Removed .* segments?\) from the index\.$/ })
      .waitFor();
    // Asked once: indexedDocuments waits for a non-empty answer, and an empty one is the point
    // here (waiting for it took 150 s of this test).
    const left = (await (
      await fetch(`${base}/api/v1/chat/documents?source=${encodeURIComponent(key)}`)
    ).json()) as { total: number; documents: { source_key: string }[] };
    expect(left.documents.map((item) => item.source_key)).not.toContain(key);
    await page.close();
  }, 240_000);

  it('narrows a search by config, language and source', async () => {
    const base = (service as WeirProcess).base;
    await indexedDocuments();
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const bodies: Record<string, unknown>[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/chat/search/keyword')) bodies.push(request.postDataJSON());
    });
    await page.goto(`${base}/#/search`);
    const config = page.getByLabel('Config');
    await config.locator('option', { hasText: 'weir-docs' }).waitFor({ state: 'attached' });
    await config.selectOption({ label: 'weir-docs' });
    await page.getByLabel('Language').selectOption('en');
    await page.getByLabel('Query').fill('webhook retry schedule');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByLabel('keyword results').locator('li').first().waitFor();
    const sources = (await (await fetch(`${base}/api/v1/chat/sources`)).json()).sources as Array<{
      execution_id: string;
      config_name: string;
    }>;
    const weirDocs = sources
      .filter((source) => source.config_name === 'weir-docs')
      .map((source) => source.execution_id);
    expect(bodies.at(-1)).toMatchObject({
      query: 'webhook retry schedule',
      language: 'en',
      sources: weirDocs,
    });
    // One run of it, by name: the same filter as an execution id.
    await page.getByLabel('Source').selectOption({ index: 1 });
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForFunction((count) => performance.getEntriesByType('resource').length > count, 0);
    await expect.poll(() => bodies.length).toBe(2);
    expect((bodies.at(-1) as { sources: string[] }).sources).toHaveLength(1);
    expect(weirDocs).toContain((bodies.at(-1) as { sources: string[] }).sources[0]);
    // Norwegian: the docs are English, so nothing is found.
    await page.getByLabel('Language').selectOption('no');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => bodies.length).toBe(3);
    expect(bodies.at(-1)).toMatchObject({ language: 'no' });
    await page.close();
  }, 240_000);
});
