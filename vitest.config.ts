import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // A fresh PGlite costs a few seconds of initdb; keep files parallel but bounded to the 2 cores.
    maxWorkers: 2,
    // One notice for the run when the tests that need Chromium could not use it.
    // The console is built once for the run (the Chromium tests load it), not by each file.
    globalSetup: ['test/helpers/chromium-notice.ts', 'test/helpers/console-build.ts'],
    // Generous: CLI tests start processes and engine tests wait on executions, and a run on the
    // two shared cores under other load took over 30 s for five of them (all pass when alone).
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
