/**
 * The Chromium the web_crawler tests drive: WEIR_CHROMIUM_PATH, else the service's own default
 * (Debian's /usr/bin/chromium), resolved by the service's settings so both agree.
 *
 * Suites that need it pass `needsChromium` as their options. Without the browser they are
 * skipped on a developer machine, so `npm test` passes on a fresh clone, but run (and fail) in
 * CI: .ci/run installs Chromium, so a missing one there is a broken machine, not a pass.
 * test/helpers/chromium-notice.ts prints the one notice for the run.
 *
 * No runtime import of vitest here: the notice, a global setup, imports this module outside
 * the test runner.
 */
import { accessSync, constants, statSync } from 'node:fs';
import type { SuiteOptions } from 'vitest';
import { loadSettings } from '../../src/settings.js';

declare module 'vitest' {
  interface TaskMeta {
    /** Set on suites (and so their tests) that drive Chromium, for the notice. */
    needsChromium?: boolean;
  }
}

export const CHROMIUM_INSTALL_COMMAND = 'apt-get install -y chromium';

export const chromiumPath = loadSettings({
  WEIR_CHROMIUM_PATH: process.env.WEIR_CHROMIUM_PATH,
}).chromium_path;

export const chromiumFound = isExecutable(chromiumPath);

/** CI=true (or any value but "false"/"0"), as CI services and .ci/run set it. */
export const inCI = !['', 'false', '0'].includes((process.env.CI ?? '').trim().toLowerCase());

export const needsChromium: SuiteOptions = {
  skip: !chromiumFound && !inCI,
  meta: { needsChromium: true },
};

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
