/**
 * Starts a worker thread running one of the service's modules. Built code runs the compiled
 * `<name>.js` beside the caller. Tests, benchmarks and `npm run dev` run the TypeScript source;
 * a worker thread does not inherit tsx's loader, so a two-line bootstrap registers it in the
 * worker before importing the source.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** `callerUrl` is the caller's import.meta.url; `name` the module's file name without extension. */
export function startModuleWorker(callerUrl: string, name: string, options: WorkerOptions = {}): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, callerUrl), options);
  // The ESM build of tsx's API (require.resolve finds the CommonJS one next to it).
  const tsxApi = pathToFileURL(
    createRequire(callerUrl)
      .resolve('tsx/esm/api')
      .replace(/\.cjs$/, '.mjs'),
  ).href;
  const source = new URL(`./${name}.ts`, callerUrl).href;
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}
