/**
 * Global setup whose teardown prints one notice for the whole run when suites marked
 * `needsChromium` (test/helpers/chromium.ts) found no browser: how many tests were skipped, or
 * why they failed in CI, and the command that installs it. Printed once by the main process
 * after the run, rather than by each test file, so it is neither repeated nor buried.
 */
import type { TestProject } from 'vitest/node';
import { CHROMIUM_INSTALL_COMMAND, chromiumFound, chromiumPath, inCI } from './chromium.js';

export default function chromiumNotice(project: TestProject): () => void {
  return () => {
    if (chromiumFound) return;
    // The state API is marked experimental in Vitest 4; it is the only way a global setup
    // sees the results.
    const tests = project.vitest.state
      .getTestModules()
      .flatMap((module) => [...module.children.allTests()])
      .filter((test) => test.meta().needsChromium);
    if (tests.length === 0) return;
    const count = (state: string) => tests.filter((test) => test.result().state === state).length;
    const what = inCI
      ? `CI is set, so the ${tests.length} tests that need it ran instead of skipping (${count('failed')} failed)`
      : `${count('skipped')} tests that need it were skipped`;
    console.warn(
      `\nChromium not found at ${chromiumPath}: ${what}. ` +
        `Install Debian's Chromium (${CHROMIUM_INSTALL_COMMAND}) or set WEIR_CHROMIUM_PATH.\n`,
    );
  };
}
