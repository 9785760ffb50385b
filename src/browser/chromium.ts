/**
 * One headless Chromium per process, the Debian binary driven by playwright-core (which never
 * downloads a browser). Launched on first use, shared by every web_crawler instance, each page
 * in its own context (no cookies or cache shared between messages), and closed by
 * `closeBrowser()` when the service stops, or by itself after a minute without pages so an
 * idle worker holds no Chromium processes.
 */
import type { Browser, BrowserContext } from 'playwright-core';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-quic',
  '--no-first-run',
  '--disable-sync',
];

const IDLE_CLOSE_MS = 60_000;

let browser: Promise<Browser> | undefined;
let openPages = 0;
let idleTimer: NodeJS.Timeout | undefined;

function launch(executablePath: string): Promise<Browser> {
  // Loaded on first use: playwright-core is large, and most processes never crawl.
  const launching = import('playwright-core')
    .then(({ chromium }) =>
      chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS, timeout: 30_000 }),
    )
    .catch((error: Error) => {
      browser = undefined;
      throw new Error(
        `Chromium could not start from ${executablePath} (set chromium_path / WEIR_CHROMIUM_PATH): ${error.message.split('\n')[0]}`,
      );
    });
  launching.then(
    (started) =>
      started.on('disconnected', () => {
        if (browser === launching) browser = undefined;
      }),
    () => {},
  );
  return launching;
}

/** Runs `work` with a fresh browser context; the context is closed afterwards whatever happens. */
export async function withBrowserContext<T>(
  executablePath: string,
  work: (context: BrowserContext) => Promise<T>,
  options: { userAgent?: string } = {},
): Promise<T> {
  clearTimeout(idleTimer);
  openPages++;
  try {
    browser ??= launch(executablePath);
    const context = await (await browser).newContext({
      ...(options.userAgent ? { userAgent: options.userAgent } : {}),
      acceptDownloads: false,
      serviceWorkers: 'block',
    });
    try {
      return await work(context);
    } finally {
      await context.close().catch(() => {});
    }
  } finally {
    if (--openPages === 0) {
      idleTimer = setTimeout(() => void closeBrowser(), IDLE_CLOSE_MS);
      idleTimer.unref();
    }
  }
}

/** Closes the shared browser (if started) and waits for its processes to end. */
export async function closeBrowser(): Promise<void> {
  clearTimeout(idleTimer);
  const current = browser;
  browser = undefined;
  if (!current) return;
  try {
    await (await current).close();
  } catch {
    // it never started, or is already gone
  }
}

/** Whether a browser is running now (for tests and health output). */
export function browserRunning(): boolean {
  return browser !== undefined;
}
