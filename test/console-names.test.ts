/**
 * The console names things and follows executions live (issue 31), in real Chromium against a
 * running `weir serve`: executions by config name, version, tag, messages, duration and
 * outcome with the UUID one click away, the same YAML posted twice told apart, live rows and
 * an execution page following the executions event stream (no polling), the spaces and plurals
 * the issue found missing, and the webhooks table's columns.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumPath, needsChromium } from './helpers/chromium.js';
import { startWeirProcess, type WeirProcess } from './helpers/weir-process.js';

/** 8 fanned-out messages, every fourth failing for good, each taking `workMs`. */
const yaml = (workMs: number) => `name: names-demo
description: eight messages, two of them failing
routes:
  - id: generate
    adapters:
      - type: synthetic_fanout
        config: { count: 8 }
        destination: sink
  - id: sink
    adapters:
      - type: synthetic_sink
        config: { fail_every: 4, failure: permanent, work_ms: ${workMs} }
`;

describe('console names executions and follows them live, in Chromium', needsChromium, () => {
  let service: WeirProcess | undefined;
  let browser: Browser;
  let page: Page;
  const requested: string[] = [];

  beforeAll(async () => {
    service = await startWeirProcess({
      WEIR_PIPELINES_DIR: mkdtempSync(path.join(tmpdir(), 'weir-no-examples-')),
      WEIR_WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
    });
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ['--no-sandbox', '--disable-gpu'],
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    page = await context.newPage();
    page.on('request', (request) =>
      requested.push(new URL(request.url()).pathname + new URL(request.url()).search),
    );
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  const api = (route: string, body?: string) =>
    fetch(`${(service as WeirProcess).base}/api/v1${route}`, {
      method: 'POST',
      ...(body ? { headers: { 'content-type': 'application/yaml' }, body } : {}),
    }).then((response) => response.json() as Promise<{ id: string }>);

  it('tells two configs of the same YAML apart, and names a run live on the overview', async () => {
    const base = (service as WeirProcess).base;
    const first = await api('/configs', yaml(0));
    const second = await api('/configs', yaml(0));
    await page.goto(`${base}/#/configs`);
    const rows = page.locator('tbody tr', { hasText: 'names-demo' });
    await rows.nth(1).waitFor();
    // Same name, yet not identical rows: each shows its own id (whole in the title) and creation time.
    const texts = await rows.allTextContents();
    expect(texts[0]).not.toBe(texts[1]);
    for (const id of [first.id, second.id])
      expect(await page.locator(`button.copy-id[title^="${id}"]`).count()).toBe(1);

    await page.goto(`${base}/#/`);
    await page.getByText('No executions yet.').waitFor();
    // Started after the page loaded: only the event stream can bring it.
    const run = await api(`/configs/${first.id}/run?tag=live-tag`);
    const row = page.getByLabel('Latest executions').locator('tr', { hasText: 'live-tag' });
    await row.locator('.status-partial').waitFor({ timeout: 30_000 });
    const text = (await row.textContent()) as string;
    expect(text).toContain('names-demo');
    expect(text).toContain('v1');
    expect(text).toContain('9 messages: 2 failed');
    expect(await row.locator('td').nth(4).textContent()).toMatch(/^\d+ (ms|s)$/);
    expect(text).toContain('sink / synthetic_sink: synthetic failure of message');
    // The UUID is not the name, but one click copies it.
    expect(await row.getByRole('link').first().textContent()).toBe('names-demo');
    await row.getByRole('button', { name: `Copy execution id ${run.id}` }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(run.id);
    // A partial run is listed among the runs that need attention.
    await page.getByLabel('Needs attention').locator('tr', { hasText: 'live-tag' }).waitFor();
    expect(requested.some((item) => item.startsWith('/api/v1/executions/events'))).toBe(true);
    // No polling: the lists are not read again on a timer while nothing changes. An update of
    // the run still in flight (under load its last one can follow the row's partial status)
    // reloads them once, so first wait until no list has been read for 1.5 s (at most 15 s: a
    // timer faster than that never lets it settle, and fails below), then expect none for 3 s.
    const listReads = () => requested.filter((item) => item.startsWith('/api/v1/executions?')).length;
    let seen = listReads();
    for (let quietMs = 0, waitedMs = 0; quietMs < 1500 && waitedMs < 15_000; waitedMs += 250) {
      await page.waitForTimeout(250);
      quietMs = listReads() === seen ? quietMs + 250 : 0;
      seen = listReads();
    }
    await page.waitForTimeout(3000);
    expect(listReads()).toBe(seen);
  });

  it('follows a running execution to its end on its page, with the spaces and plurals right', async () => {
    const base = (service as WeirProcess).base;
    const config = await api('/configs', yaml(400));
    const run = await api(`/configs/${config.id}/run?tag=slow-tag`);
    await page.goto(`${base}/#/executions/${run.id}`);
    const heading = page.getByRole('heading', { level: 1 });
    await heading.getByText('names-demo').waitFor();
    expect(await heading.textContent()).toContain('slow-tag');
    await page.locator('.status-running').first().waitFor();
    // It ends while the page stays open, told by the event stream.
    await page.locator('.status-partial').first().waitFor({ timeout: 30_000 });
    expect(await page.getByLabel('Progress').textContent()).toContain('9 of 9 messages');
    const failure = page.locator('.messages li').first();
    await failure.waitFor();
    expect(await failure.textContent()).toContain('sink / synthetic_sink after 1 attempt');
    expect(await failure.locator('.muted').first().textContent()).toBe('after 1 attempt');
    await failure.getByRole('button', { name: 'Lineage' }).click();
    const lineage = page.getByLabel('Lineage');
    await lineage.locator('li').nth(1).waitFor();
    expect(await lineage.locator('li').first().textContent()).toMatch(/generate \/ synthetic_fanout from /);
  });

  it('says 1 error, not 1 errors, and keeps the webhooks table in its columns', async () => {
    const base = (service as WeirProcess).base;
    await page.goto(`${base}/#/configs/new`);
    await page.getByLabel('Pipeline YAML').fill('name: one-error\nroutes: []\n');
    await page.getByRole('button', { name: 'Validate' }).click();
    await page.getByText(/^Invalid: 1 error, 0 warnings$/).waitFor();

    await fetch(`${base}/api/v1/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        url: 'http://127.0.0.1:9/weir',
        secret: 'a-secret-of-sixteen-plus',
        event_types: ['execution.completed'],
      }),
    });
    await page.goto(`${base}/#/webhooks`);
    const cells = page.locator('tbody tr').first().locator('td');
    await cells.first().waitFor();
    expect(await cells.count()).toBe(await page.locator('thead th').count());
    expect(await cells.evaluateAll((items) => items.map((item) => getComputedStyle(item).display))).toEqual(
      Array(4).fill('table-cell'),
    );
  });
});
