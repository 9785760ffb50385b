/**
 * Global setup: builds the web console into dist/console once for the whole run, when a file
 * under console/ is newer than the last build. The Chromium tests load it from there. Each of
 * them used to rebuild it in its own beforeAll; the build deletes dist/console/chunks first,
 * so two test files running side by side could remove the editor chunk a page of the other
 * was about to load.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const built = 'dist/console/app.js';

function newestChange(entry: string): number {
  const stats = statSync(entry);
  if (!stats.isDirectory()) return stats.mtimeMs;
  let newest = stats.mtimeMs;
  for (const name of readdirSync(entry)) newest = Math.max(newest, newestChange(path.join(entry, name)));
  return newest;
}

function builtAt(): number {
  try {
    return statSync(built).mtimeMs;
  } catch {
    return Number.NEGATIVE_INFINITY;
  }
}

export default function buildConsole(): void {
  const inputs = ['console', 'scripts/build-console.mjs', 'package-lock.json'];
  if (Math.max(...inputs.map(newestChange)) <= builtAt()) return;
  execFileSync(process.execPath, ['scripts/build-console.mjs'], { stdio: 'ignore' });
}
