/**
 * Builds the web console (console/) into dist/console: console/src/main.ts bundled and
 * minified by esbuild with Preact, htm, marked and DOMPurify inside (no CDN: the console works
 * offline), plus index.html and app.css. The config editor (CodeMirror, three times the rest)
 * is a chunk of its own under chunks/, loaded when a config is opened. Prints the gzipped size
 * of what every page loads, and of the editor.
 */
import { copyFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const out = process.argv[2] ?? 'dist/console';
mkdirSync(out, { recursive: true });
// Chunk names carry their content's hash: the old ones would pile up.
rmSync(path.join(out, 'chunks'), { recursive: true, force: true });
const result = await build({
  entryPoints: { app: 'console/src/main.ts' },
  metafile: true,
  bundle: true,
  minify: true,
  format: 'esm',
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  target: ['chrome110', 'firefox110', 'safari16'],
  outdir: out,
  legalComments: 'linked',
  logLevel: 'warning',
});
for (const file of ['index.html', 'app.css']) copyFileSync(path.join('console', file), path.join(out, file));
const gzipped = (files) =>
  files.reduce((total, file) => total + gzipSync(readFileSync(path.join(out, file))).length, 0) / 1024;
// What every page loads: the page, the stylesheet, app.js and the chunks it imports statically.
const outputs = result.metafile.outputs;
const entry = Object.keys(outputs).find((file) => outputs[file].entryPoint);
const initial = [
  entry,
  ...outputs[entry].imports.filter((item) => item.kind === 'import-statement').map((item) => item.path),
];
const relative = (file) => path.relative(out, file);
const lazy = Object.keys(outputs).filter((file) => file.endsWith('.js') && !initial.includes(file));
console.log(
  `console built into ${out}: ${gzipped(['app.css', 'index.html', ...initial.map(relative)]).toFixed(1)} KB gzipped, ` +
    `and ${gzipped(lazy.map(relative)).toFixed(1)} KB more for the config editor`,
);
