/**
 * Starts a worker thread running one of the service's modules. Built code runs the compiled
 * `dist/<module>.js` (scripts/bundle-dist.mjs bundles each src file named `*-worker.ts` as an entry
 * point at that path). Tests, benchmarks and `npm run dev` run the TypeScript source; a worker thread
 * does not inherit tsx's loader, so a two-line bootstrap registers it in the worker before
 * importing the source.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { packagePath, runsFromSource } from './package-root.js';

/**
 * `module` is the worker's module path below src/, without extension ('db/pglite-worker'). It
 * is named from the package's folder, not from the caller's, since bundling moves the caller.
 */
export function startModuleWorker(module: `${string}-worker`, options: WorkerOptions = {}): Worker {
  if (!runsFromSource()) return new Worker(pathToFileURL(packagePath(`dist/${module}.js`)), options);
  // The ESM build of tsx's API (require.resolve finds the CommonJS one next to it).
  const tsxApi = pathToFileURL(
    createRequire(import.meta.url)
      .resolve('tsx/esm/api')
      .replace(/\.cjs$/, '.mjs'),
  ).href;
  const source = pathToFileURL(packagePath(`src/${module}.ts`)).href;
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}
