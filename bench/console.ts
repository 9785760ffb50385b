/**
 * npm run bench:console -- [--executions 1000] [--messages 100000]
 *
 * The web console in Debian's Chromium (playwright-core) against `weir serve` on the embedded
 * defaults, with the console built into dist/console:
 * 1. **Overview with many executions.** `--executions` executions are created through the API
 *    (run without the init message, then cancelled), then the overview is opened five times;
 *    timed from navigation to the health cards and the latest-executions table on screen.
 *    Baseline in the same run: the four API requests the overview makes, fetched from Node.
 * 2. **Execution page under a big run.** A `--messages` synthetic fan-out runs while its
 *    execution page is open (kept current by the executions event stream), for 10 s: the
 *    longest gap between animation frames and the long tasks (over 50 ms) in the page say
 *    whether it stays responsive.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { loadSettings } from '../src/settings.js';
import { inCI } from '../test/helpers/chromium.js';
import { startWeirProcess } from '../test/helpers/weir-process.js';
import { abort, check, finish, target } from './lib/checks.js';

const { values } = parseArgs({
  options: {
    executions: { type: 'string', default: '1000' },
    messages: { type: 'string', default: '100000' },
  },
});
const executionCount = Number(values.executions);
const messageCount = Number(values.messages);

async function post(
  url: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<Record<string, unknown>> {
  const response = await fetch(url, {
    method: 'POST',
    headers: body === undefined ? {} : { 'content-type': contentType },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

const median = (numbers: number[]) =>
  [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)] as number;

async function main(): Promise<void> {
  const executablePath = loadSettings(process.env).chromium_path;
  if (!existsSync(executablePath)) {
    const needed = `bench:console needs Chromium at ${executablePath} (apt-get install -y chromium)`;
    // In CI a missing browser is a broken machine, not a bench that passed.
    if (inCI) abort(`${needed}; CI is set`);
    console.log(`SKIPPED: ${needed}`);
    return;
  }
  execFileSync(process.execPath, ['scripts/build-console.mjs'], { stdio: 'inherit' });
  const service = await startWeirProcess({ WEIR_PIPELINES_DIR: path.join(os.tmpdir(), 'weir-no-examples') });
  const browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const api = `${service.base}/api/v1`;
    // 1. Many executions.
    const idle = await post(
      `${api}/configs`,
      'name: bench-idle\nroutes:\n  - id: sink\n    adapters:\n      - type: synthetic_sink\n',
      'application/yaml',
    );
    const seedStarted = performance.now();
    for (let index = 0; index < executionCount; index++) {
      const execution = await post(`${api}/configs/${idle.id}/run?skip_init_message=true`, {});
      await post(`${api}/executions/${execution.id}/cancel`);
    }
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    const overviewRequests = [
      '/system/health',
      '/executions?status=running&limit=20',
      '/executions?status=failed&limit=10',
      '/executions?limit=10',
    ];
    const baseline: number[] = [];
    const rendered: number[] = [];
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    for (let round = 0; round < 6; round++) {
      const started = performance.now();
      await Promise.all(
        overviewRequests.map((request) => fetch(`${api}${request}`).then((response) => response.text())),
      );
      if (round > 0) baseline.push(performance.now() - started);
      await page.goto('about:blank');
      const navigated = performance.now();
      await page.goto(`${service.base}/#/`);
      await page.locator('.card').first().waitFor();
      await page.locator('table tbody tr').nth(9).waitFor();
      // The first round warms the browser's cache of the bundle, as a second visit would.
      if (round > 0) rendered.push(performance.now() - navigated);
    }
    console.log(
      `machine: ${os.cpus()[0]?.model} x${os.cpus().length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`,
    );
    console.log(`overview with ${executionCount} executions (seeded in ${seedSeconds.toFixed(1)} s):`);
    console.log(`  baseline (its 4 API requests from Node): median ${median(baseline).toFixed(1)} ms`);
    console.log(
      `  console (navigation to cards and table):  median ${median(rendered).toFixed(1)} ms (target <= 1000 ms: ${target(median(rendered) <= 1000, `overview median ${median(rendered).toFixed(0)} ms over 1000 ms`)})`,
    );

    // 2. A big execution streaming its progress.
    const big = await post(
      `${api}/configs`,
      `name: bench-big\nroutes:\n  - id: fanout\n    adapters:\n      - type: synthetic_fanout\n        config: { count: ${messageCount} }\n        destination: sink\n  - id: sink\n    adapters:\n      - type: synthetic_sink\n        concurrency: 64\n`,
      'application/yaml',
    );
    const execution = await post(`${api}/configs/${big.id}/run`, {});
    await page.goto(`${service.base}/#/executions/${execution.id}`);
    await page.locator('.progress progress').waitFor();
    // Runs in the page (browser globals), so it is given as source text.
    const responsiveness = (await page.evaluate(`new Promise((resolve) => {
      const longTasks = [];
      new PerformanceObserver((list) => { for (const entry of list.getEntries()) longTasks.push(entry.duration); })
        .observe({ type: 'longtask', buffered: false });
      let last = performance.now();
      let worstGap = 0;
      const until = last + 10000;
      const frame = (now) => {
        worstGap = Math.max(worstGap, now - last);
        last = now;
        if (now < until) requestAnimationFrame(frame);
        else resolve({ worstGap, longTasks: longTasks.length, longTaskMs: longTasks.reduce((sum, value) => sum + value, 0) });
      };
      requestAnimationFrame(frame);
    })`)) as { worstGap: number; longTasks: number; longTaskMs: number };
    const progress = await page.locator('.progress span').textContent();
    console.log(`execution page while ${messageCount} messages run (10 s):`);
    console.log(`  longest gap between frames: ${responsiveness.worstGap.toFixed(0)} ms`);
    console.log(
      `  long tasks: ${responsiveness.longTasks} (${responsiveness.longTaskMs.toFixed(0)} ms in all)`,
    );
    console.log(`  progress shown at the end: ${progress}`);
    check(Boolean(progress?.trim()), 'the execution page showed no progress');
    await post(`${api}/executions/${execution.id}/cancel`);
  } finally {
    await browser.close();
    await service.stop();
  }
}

await main();
finish();
