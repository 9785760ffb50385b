/**
 * The worker threads of the built service run `dist/<module>.js`, which exists only because
 * scripts/bundle-dist.mjs bundles every src file named `*-worker.ts` to that path (issue 35).
 * This fails when a startModuleWorker call names a module the bundle would not produce: one
 * that does not exist under src/, or a literal that is not a plain path.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packagePath, packageRoot } from '../src/runtime/package-root.js';

const root = path.resolve(import.meta.dirname, '..');

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(file);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [file] : [];
  });
}

describe('module workers', () => {
  it('names the package folder from src/ as the one holding package.json', () => {
    expect(packageRoot()).toBe(root);
    expect(JSON.parse(readFileSync(packagePath('package.json'), 'utf8')).name).toBe('weir');
  });

  it('every startModuleWorker call names an existing src/<module>-worker.ts the bundle builds', () => {
    const calls: { file: string; argument: string }[] = [];
    for (const file of sourceFiles(path.join(root, 'src'))) {
      if (file.endsWith(path.join('runtime', 'module-worker.ts'))) continue;
      for (const match of readFileSync(file, 'utf8').matchAll(/startModuleWorker\(\s*([^,)]*)/g))
        calls.push({ file: path.relative(root, file), argument: (match[1] as string).trim() });
    }
    expect(calls.length).toBeGreaterThanOrEqual(5);
    for (const { file, argument } of calls) {
      const literal = /^'([a-z0-9/-]+-worker)'$/.exec(argument);
      expect(literal, `${file}: ${argument} is not a plain module path`).not.toBeNull();
      const module = (literal as RegExpExecArray)[1] as string;
      expect(existsSync(path.join(root, 'src', `${module}.ts`)), `${file}: src/${module}.ts`).toBe(true);
    }
  });
});
