/**
 * Bundles the compiled service for start-up speed (issue 35). `node dist/main.js` used to
 * resolve and read about 1,400 ES modules before it could answer: the service's own 340 and
 * the 940 files of TypeBox and Kysely. esbuild bundles src/main.ts and every worker module
 * (src files named `*-worker.ts`, which src/runtime/module-worker.ts runs from
 * dist/<path>.js) into those same paths under dist/, with the code they share in
 * dist/chunks/. Dynamic imports stay chunks of their own, so what a command or an adapter
 * imports on first use is still loaded then. Other packages stay external and load from
 * node_modules as before: several of them read files beside their own modules (PGlite's
 * WebAssembly, the Swagger UI's assets, pino's transports, Playwright). Files the service
 * reads from the package are named from its folder (src/runtime/package-root.ts), whatever
 * depth a bundled module ends up at. tsc's per-file output stays in dist/ beside the bundle
 * (scripts/build-word-vectors.mjs imports it).
 */
import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

/** Packages bundled in: plain ES modules of hundreds of files each, read no file of their own. */
const inlined = ['typebox', 'kysely'];

function workerModules(folder) {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(folder, entry.name);
    if (entry.isDirectory()) return workerModules(file);
    return entry.name.endsWith('-worker.ts') ? [file] : [];
  });
}

const isInlined = (specifier) =>
  inlined.some((name) => specifier === name || specifier.startsWith(`${name}/`));

// Chunk names carry a hash of their content: the last build's would otherwise stay beside.
rmSync('dist/chunks', { recursive: true, force: true });

await build({
  entryPoints: ['src/main.ts', ...workerModules('src')],
  outbase: 'src',
  outdir: 'dist',
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
  plugins: [
    {
      name: 'external-packages',
      setup(builder) {
        builder.onResolve({ filter: /^[^./]/ }, (args) =>
          isInlined(args.path) ? undefined : { path: args.path, external: true },
        );
      },
    },
  ],
});
