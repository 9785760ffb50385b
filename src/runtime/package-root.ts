/**
 * The package's own folder (where package.json is), found by walking up from this module.
 * Source (src/…), the compiled files (dist/…) and the bundled ones (dist/main.js and its
 * chunks in dist/chunks/, scripts/bundle-dist.mjs) sit at different depths below it, so files
 * the service reads from the package (docs/, data/, dist/console, a worker's module) are
 * named from here rather than relative to the module that reads them.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

export function packageRoot(): string {
  if (root) return root;
  let folder = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(folder, 'package.json'))) {
    const parent = path.dirname(folder);
    if (parent === folder) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    folder = parent;
  }
  root = folder;
  return folder;
}

/** A file of the package, from its path relative to the package's folder ('data/x.tsv'). */
export function packagePath(relative: string): string {
  return path.join(packageRoot(), relative);
}

/** Whether this code runs from the TypeScript source (tests, tsx) rather than from dist/. */
export function runsFromSource(): boolean {
  return import.meta.url.endsWith('.ts');
}
