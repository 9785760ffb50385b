/**
 * `npm start` builds only when it has to: when a source file, a tsconfig or package.json is
 * newer than the last successful build (its stamp, dist/.build-stamp). A fresh clone has no
 * stamp and builds; a second start with nothing changed skips the ten seconds of tsc.
 * `npm run build` always builds (and writes the stamp too).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const stamp = 'dist/.build-stamp';

function newestChange(entry) {
  let stats;
  try {
    stats = statSync(entry);
  } catch {
    return Number.NEGATIVE_INFINITY; // an input this checkout does not have
  }
  if (!stats.isDirectory()) return stats.mtimeMs;
  let newest = stats.mtimeMs; // a deleted file changes its folder
  for (const name of readdirSync(entry)) newest = Math.max(newest, newestChange(path.join(entry, name)));
  return newest;
}

function builtAt() {
  try {
    return statSync(stamp).mtimeMs;
  } catch {
    return Number.NEGATIVE_INFINITY;
  }
}

const inputs = [
  'src',
  'console',
  'tsconfig.json',
  'tsconfig.build.json',
  'package.json',
  'package-lock.json',
];
const changed = Math.max(...inputs.map(newestChange));
if (changed > builtAt() || process.argv.includes('--force')) {
  const build = spawnSync(
    process.execPath,
    ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'],
    {
      stdio: 'inherit',
    },
  );
  if (build.status !== 0) process.exit(build.status ?? 1);
  const console = spawnSync(process.execPath, ['scripts/build-console.mjs'], { stdio: 'inherit' });
  if (console.status !== 0) process.exit(console.status ?? 1);
  // The word vectors' compact file, converted here rather than on the service's event loop.
  const vectors = spawnSync(process.execPath, ['scripts/build-word-vectors.mjs'], { stdio: 'inherit' });
  if (vectors.status !== 0) process.exit(vectors.status ?? 1);
  // ELD's language tables, pruned to the stemmed languages, likewise (a start reads the file).
  const languageTables = spawnSync(process.execPath, ['scripts/build-eld-tables.mjs'], { stdio: 'inherit' });
  if (languageTables.status !== 0) process.exit(languageTables.status ?? 1);
  // dist/main.js and the worker modules bundled over tsc's output: fewer files to load at start.
  const bundle = spawnSync(process.execPath, ['scripts/bundle-dist.mjs'], { stdio: 'inherit' });
  if (bundle.status !== 0) process.exit(bundle.status ?? 1);
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
} else {
  console.log('build is up to date (dist/.build-stamp is newer than the sources)');
}
