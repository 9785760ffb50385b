/**
 * Where browser tests put their screenshots. The console's screenshots in docs/console/ are
 * tracked files, so a plain `npm test` must not rewrite them: they go to a fresh temporary
 * directory unless WEIR_WRITE_SCREENSHOTS=1 asks for docs/console/ (`npm run screenshots`,
 * docs/console.md).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const trackedScreenshots = path.resolve('docs/console');

export function screenshotDirectory(environment: NodeJS.ProcessEnv = process.env): string {
  if (environment.WEIR_WRITE_SCREENSHOTS === '1') return trackedScreenshots;
  return mkdtempSync(path.join(tmpdir(), 'weir-screenshots-'));
}
