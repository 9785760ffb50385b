/**
 * The web console end to end in real Chromium (Debian's, through playwright-core) against a
 * running `weir serve` on the embedded defaults: a config created in the editor after a
 * deliberate error shown at its line, run and watched to the end, a failed message's error and
 * lineage, its stored objects, search, a streamed chat answer with citations, a webhook and its
 * delivery, and the key prompt when API keys are set. Screenshots of each page go to a
 * temporary directory, or to docs/console/ with WEIR_WRITE_SCREENSHOTS=1 (`npm run
 * screenshots`, docs/console.md).
 */
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumPath, needsChromium } from './helpers/chromium.js';
import { screenshotDirectory } from './helpers/screenshots.js';
import { startWebhookReceiver, type WebhookReceiver } from './helpers/webhook-receiver.js';
import { startWeirProcess, type WeirProcess } from './helpers/weir-process.js';

const screenshots = screenshotDirectory();

/** A pipeline over docs/ whose converter refuses documents over 10 KB: some messages fail. */
const pipelineWith = (adapterType: string) => `name: console-docs
description: docs/ with a small document limit
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
      - type: ${adapterType}
        config:
          max_document_size_mb: 0.01
      - type: smart_segmenter
      - type: segment_publisher
`;

describe('web console in Chromium', needsChromium, () => {
  let service: WeirProcess | undefined;
  let keyed: WeirProcess | undefined;
  let receiver: WebhookReceiver;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    service = await startWeirProcess({ WEIR_WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8' });
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ['--no-sandbox', '--disable-gpu'],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await keyed?.stop();
    await receiver?.close();
  });

  const shoot = (name: string) =>
    page.screenshot({ path: path.join(screenshots, `${name}.png`), fullPage: true });

  it('walks a config from a validation error to a run, its failures, lineage and stored objects', async () => {
    const base = (service as WeirProcess).base;
    await page.goto(`${base}/`);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByText('healthy').first().waitFor();
    // The examples ran on start; wait for them to show.
    await page.locator('table a').first().waitFor();
    await shoot('overview');

    await page.getByRole('link', { name: 'Configs', exact: true }).click();
    await page.getByRole('link', { name: 'New config' }).click();
    const editor = page.getByLabel('Pipeline YAML');
    await editor.fill(pipelineWith('document_convertr'));
    await page.getByRole('button', { name: 'Validate' }).click();
    const finding = page.locator('.findings li').first();
    await finding.waitFor();
    // document_convertr is on line 17, its value at column 15.
    expect(await finding.textContent()).toMatch(/line 17, column 15\s*E20\d/);
    // The code links to its row of docs/validation-codes.md, shown by the console in a new tab.
    const code = (await finding.locator('a.code').textContent()) as string;
    const docsPage = await browser.newPage();
    await docsPage.goto(`${base}/${await finding.locator('a.code').getAttribute('href')}`);
    await docsPage.locator('tr.highlight').filter({ hasText: code }).waitFor();
    await docsPage.close();
    await editor.fill(pipelineWith('document_converter'));
    await page.getByRole('button', { name: 'Validate' }).click();
    await page.getByText('Valid: 0 errors').waitFor();
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByText('Saved version 1.').waitFor();
    await shoot('config-editor');

    await page.getByRole('button', { name: 'Run…' }).click();
    await page.getByLabel('Tag (optional)').fill('console-run');
    await page.getByRole('button', { name: 'Run now' }).click();
    await page.getByRole('heading', { name: /^Execution/ }).waitFor();
    // Some documents fail: the run completes, and the console shows it partial, not green.
    await page.locator('.status-partial').first().waitFor({ timeout: 60_000 });
    expect(await page.locator('.outcome-note').textContent()).toMatch(
      /Some messages failed.*documents \/ document_converter.*over max_document_size_mb/s,
    );
    // Per stage: the converter's row counts its failures.
    const converter = page.getByLabel('Stages').locator('tr', { hasText: 'documents / document_converter' });
    await converter.waitFor();
    // The stage table is refreshed from its own request, which may land just after the
    // status: wait for it (a table that never shows the failures still fails here).
    await expect
      .poll(async () => Number(await converter.locator('td').nth(4).textContent()), { timeout: 15_000 })
      .toBeGreaterThan(0);
    const failure = page.locator('.messages li').first();
    await failure.waitFor();
    expect(await failure.textContent()).toMatch(/document_converter.*over max_document_size_mb/s);
    await failure.getByRole('button', { name: 'Lineage' }).click();
    const lineage = page.getByLabel('Lineage');
    await lineage.locator('li').nth(2).waitFor();
    expect(await lineage.locator('li').allTextContents()).toEqual([
      expect.stringMatching(/list \/ fileshare_enumerator/),
      expect.stringMatching(/documents \/ fileshare_fetcher/),
      expect.stringMatching(/documents \/ document_converter/),
    ]);
    await shoot('execution');
    const runId = page.url().split('#/executions/')[1] ?? '';
    await page.goto(`${base}/#/`);
    // The overview lists the partial run among the runs that need attention.
    await page.getByLabel('Needs attention').locator(`a[href="#/executions/${runId}"]`).waitFor();
    expect(
      await page
        .getByLabel('Needs attention')
        .locator('tr', { hasText: runId.slice(0, 8) })
        .textContent(),
    ).toContain('partial');
    await page.goto(`${base}/#/executions/${runId}`);

    await page.getByRole('link', { name: 'stored objects' }).click();
    await page.getByRole('link', { name: 'fileshare_fetcher/' }).click();
    // The listing of the folder, not the one still shown while it loads.
    await page.locator('.crumbs a', { hasText: 'fileshare_fetcher' }).waitFor();
    await page
      .locator('.listing li.folder a')
      .filter({ hasText: /^[0-9a-f]{16}\/$/ })
      .first()
      .click();
    await page.locator('.listing li a').filter({ hasText: /\.md$/ }).first().click();
    const preview = page.getByLabel('Object preview');
    await preview.getByText('Sidecar metadata').waitFor();
    expect(await preview.locator('pre').first().textContent()).toContain('"stage": "fileshare_fetcher"');
    await preview.locator('.markdown h1, .markdown h2').first().waitFor();
    await shoot('storage');
  });

  it('searches three ways side by side and streams a chat answer with citations', async () => {
    const base = (service as WeirProcess).base;
    await page.goto(`${base}/#/search`);
    await page.getByLabel('Query').fill('webhook retry schedule');
    await page.getByRole('button', { name: 'Search' }).click();
    for (const mode of ['keyword', 'vector', 'rrf'])
      await page.getByLabel(`${mode} results`).locator('li').first().waitFor();
    expect(await page.getByLabel('rrf results').locator('li').first().textContent()).toMatch(/keyword #\d+/);
    await shoot('search');

    await page.goto(`${base}/#/chat`);
    await page.getByLabel('Question').fill('How are webhook deliveries retried?');
    await page.getByRole('button', { name: 'Ask' }).click();
    await page.getByLabel('Citations').locator('li').first().waitFor();
    await page.locator('.answer').filter({ hasText: /\w{3}/ }).first().waitFor();
    // A file from the share opens in the console's view of its stored object, not at file:// (issue 31).
    expect(await page.getByLabel('Citations').locator('a').first().getAttribute('href')).toMatch(
      /^#\/storage\/\?object=[^/]+\.md$/,
    );
    expect(await page.getByLabel('Citations').locator('a[href^="file:" i]').count()).toBe(0);
    // A template made beside the chat becomes the selected one.
    await page.getByText('Templates', { exact: true }).click();
    await page.getByLabel('A new template (JSON)').fill(
      JSON.stringify({
        name: 'Short answers',
        system_prompt: 'Answer in one sentence.',
        rag: { limit: 3 },
      }),
    );
    await page.getByRole('button', { name: 'Create template' }).click();
    await page.getByText('Template: Short answers').waitFor();
    expect(await page.getByLabel('Template', { exact: true }).locator('option:checked').textContent()).toBe(
      'Short answers',
    );
    await shoot('chat');
  });

  it('creates a webhook and shows its delivery', async () => {
    const base = (service as WeirProcess).base;
    await page.goto(`${base}/#/webhooks`);
    await page.getByLabel('Target URL').fill(receiver.url);
    await page.getByLabel('Signing secret (at least 16 characters)').fill(receiver.secret);
    await page.getByRole('button', { name: 'Create subscription' }).click();
    await page.getByText('Subscription created.').waitFor();
    // An execution that completes now is delivered.
    const configs = (await (await fetch(`${base}/api/v1/configs`)).json()) as {
      configs: { id: string; name: string }[];
    };
    const load = configs.configs.find((config) => config.name === 'synthetic-load');
    await fetch(`${base}/api/v1/configs/${load?.id}/run`, { method: 'POST' });
    await receiver.waitFor(1, 30_000);
    await page.getByRole('button', { name: 'Deliveries' }).click();
    await page.getByLabel('Deliveries').locator('.status-delivered').first().waitFor({ timeout: 15_000 });
    await shoot('webhooks');
  });

  it('pauses and resumes a running route and shows its stage metrics', async () => {
    const base = (service as WeirProcess).base;
    const slow = `name: console-slow
routes:
  - id: fanout
    adapters:
      - type: synthetic_fanout
        config: { count: 400 }
        destination: sink
  - id: sink
    adapters:
      - type: synthetic_sink
        config: { work_ms: 100 }
        concurrency: 2
`;
    const created = await fetch(`${base}/api/v1/configs`, {
      method: 'POST',
      headers: { 'content-type': 'application/yaml' },
      body: slow,
    });
    const config = (await created.json()) as { id: string };
    const run = (await (
      await fetch(`${base}/api/v1/configs/${config.id}/run`, { method: 'POST' })
    ).json()) as { id: string };
    try {
      await page.goto(`${base}/#/pipelines`);
      const sink = page.getByLabel('Route sink');
      await sink.getByRole('button', { name: 'Pause' }).click();
      await sink.locator('.status-paused').waitFor();
      await sink.getByRole('button', { name: 'Resume' }).click();
      await sink.locator('.status-running').waitFor();
      await sink.locator('td', { hasText: 'synthetic_sink' }).waitFor();
      await shoot('pipelines');
    } finally {
      await fetch(`${base}/api/v1/executions/${run.id}/cancel`, { method: 'POST' });
    }
  });

  it('runs under its content security policy and links a javascript: source nowhere', async () => {
    const base = (service as WeirProcess).base;
    const context = await browser.newContext();
    const own = await context.newPage();
    const violations: string[] = [];
    own.on('console', (message) => {
      if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text());
    });
    own.on('pageerror', (error) => violations.push(error.message));
    // The search answers come from this double: a source URL any crawled page could claim.
    const source = (url: string, title: string) => ({
      rank: 1,
      score: 1,
      text: 'passage',
      source: { url, object_key: null, title, heading_path: [] },
      components: [],
    });
    await own.route('**/api/v1/chat/search/*', (route) =>
      route.fulfill({
        json: {
          results: [
            source('javascript:fetch("/api/v1/system/config")', 'Hostile source'),
            source('https://docs.example.com/page', 'Plain source'),
          ],
        },
      }),
    );
    const answer = await own.goto(`${base}/#/search`);
    expect(answer?.headers()['content-security-policy']).toContain("script-src 'self'");
    await own.getByLabel('Query').fill('anything');
    await own.getByRole('button', { name: 'Search' }).click();
    const results = own.getByLabel('keyword results');
    await results.getByText('Plain source').waitFor();
    expect(await results.getByRole('link', { name: 'Plain source' }).getAttribute('href')).toBe(
      'https://docs.example.com/page',
    );
    await results.getByText('Hostile source').waitFor();
    expect(await results.getByRole('link', { name: 'Hostile source' }).count()).toBe(0);
    expect(await results.locator('a[href^="javascript:" i]').count()).toBe(0);
    expect(violations).toEqual([]);
    await context.close();
  });

  it('asks for an API key when the service has keys, and works once given one', async () => {
    keyed = await startWeirProcess({
      WEIR_API_KEYS: 'console-test-key',
      WEIR_PIPELINES_DIR: path.join(tmpdir(), 'none'),
    });
    const context = await browser.newContext({ viewport: { width: 390, height: 800 } });
    const small = await context.newPage();
    await small.goto(`${keyed.base}/`);
    await small.getByRole('dialog', { name: 'API key' }).waitFor();
    await small.screenshot({ path: path.join(screenshots, 'api-key.png') });
    await small.getByLabel('Key', { exact: true }).fill('console-test-key');
    await small.getByRole('button', { name: 'Use this key' }).click();
    await small.getByText('healthy').first().waitFor();
    await small.getByText('No executions yet.').waitFor();
    await small.screenshot({ path: path.join(screenshots, 'overview-390.png'), fullPage: true });
    await context.close();
  });
});
