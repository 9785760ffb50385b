/**
 * Builds the web console (console/) into dist/console: console/src/main.ts bundled and
 * minified by esbuild with Preact, htm, marked and DOMPurify inside (no CDN: the console works
 * offline), plus index.html and app.css. Prints the gzipped size of what ships.
 */
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const out = process.argv[2] ?? 'dist/console';
mkdirSync(out, { recursive: true });
await build({
  entryPoints: ['console/src/main.ts'],
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['chrome110', 'firefox110', 'safari16'],
  outfile: path.join(out, 'app.js'),
  legalComments: 'linked',
  logLevel: 'warning',
});
for (const file of ['index.html', 'app.css']) copyFileSync(path.join('console', file), path.join(out, file));
const shipped = ['app.js', 'app.css', 'index.html'].reduce(
  (total, file) => total + gzipSync(readFileSync(path.join(out, file))).length,
  0,
);
console.log(`console built into ${out}: ${(shipped / 1024).toFixed(1)} KB gzipped`);
