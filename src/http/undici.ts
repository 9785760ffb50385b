/**
 * undici, loaded on the first outbound request rather than at start (issue 35): importing it
 * costs about 0.13 s of CPU and 20 MB of RSS (quiet figures in docs/benchmarks.md), and a
 * service that fetches nothing, or not yet, needs none of it. It is CommonJS, so `require`
 * loads it synchronously where it is first needed; types come from `import type`, which
 * loads nothing.
 */
import { createRequire } from 'node:module';

type Undici = typeof import('undici');

let loaded: Undici | undefined;

export function undici(): Undici {
  loaded ??= createRequire(import.meta.url)('undici') as Undici;
  return loaded;
}
