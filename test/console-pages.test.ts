/**
 * Console pages of issue 31 in real Chromium against a running `weir serve` on the embedded
 * defaults (the example pipelines index docs/ on start): chat answers rendered as sanitised
 * markdown.
 */
import { execFileSync } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumPath, needsChromium } from './helpers/chromium.js';
import { startWeirProcess, type WeirProcess } from './helpers/weir-process.js';

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
    execFileSync(process.execPath, ['scripts/build-console.mjs'], { stdio: 'ignore' });
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
});
