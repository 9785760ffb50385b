/**
 * Issue 32, item 9: modules under src/ import each other without a runtime cycle. A cycle
 * (llm.ts <-> openai-provider.ts was one) makes the evaluation order of the modules decide
 * whether a class or constant is defined yet when another module's top level reads it, and it
 * is the sign of a port kept above its implementers. Type-only imports are erased by the
 * compiler and do not count.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { relativeRuntimeImports as runtimeImports } from './helpers/runtime-imports.js';

const root = path.resolve(import.meta.dirname, '..');

/** Every cycle of the graph, each once, as the files along it. */
function findCycles(graph: Map<string, string[]>): string[][] {
  const cycles = new Map<string, string[]>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const done = new Set<string>();
  const visit = (file: string) => {
    if (onStack.has(file)) {
      const cycle = stack.slice(stack.indexOf(file));
      cycles.set([...cycle].sort().join(' '), cycle);
      return;
    }
    if (done.has(file) || !graph.has(file)) return;
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) visit(next);
    stack.pop();
    onStack.delete(file);
    done.add(file);
  };
  for (const file of graph.keys()) visit(file);
  return [...cycles.values()];
}

/** Every relative import and re-export of `source`, type-only ones included. */
function allImports(source: string): string[] {
  return [...source.matchAll(/^(?:import|export)\s[\s\S]*?\s+from\s+'(\.[^']+)'/gm)].map(
    (match) => match[1] as string,
  );
}

function sourceGraph(read: (source: string) => string[] = runtimeImports): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const files = readdirSync(path.join(root, 'src'), { recursive: true, encoding: 'utf8' }).filter(
    (file) => file.endsWith('.ts') && !file.endsWith('.test.ts'),
  );
  for (const file of files) {
    const full = path.join('src', file);
    const imports = read(readFileSync(path.join(root, full), 'utf8'));
    graph.set(
      full,
      imports.map((specifier) => path.join(path.dirname(full), specifier.replace(/\.js$/, '.ts'))),
    );
  }
  return graph;
}

describe('import graph of src/', () => {
  it('finds a cycle and ignores type-only imports (the checker itself)', () => {
    const imports = runtimeImports(
      "import type { A } from './a.js';\nimport { type B, type C } from './b.js';\nimport { D } from './d.js';\nexport { E } from './e.js';",
    );
    expect(imports).toEqual(['./d.js', './e.js']);
    // A package's import ends at its semicolon: it must not run on into the type-only import after it.
    expect(runtimeImports("import { sql } from 'kysely';\nimport type { F } from './f.js';")).toEqual([]);
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(findCycles(graph)).toEqual([['a', 'b', 'c']]);
  });

  it('has no runtime import cycle', () => {
    const graph = sourceGraph();
    expect(graph.size).toBeGreaterThan(200);
    expect(findCycles(graph).map((cycle) => cycle.join(' -> '))).toEqual([]);
  });

  it('keeps the database layer below the code that uses it: src/db and src/ports import no adapter, engine or API code', () => {
    const above = /^src\/(adapters|api|engine|chat|search|consolidation|conversations|cli)\//;
    const upward: string[] = [];
    // Type-only imports count here: a port declared above its implementer is the finding.
    for (const [file, imports] of sourceGraph(allImports)) {
      if (!/^src\/(db|ports)\//.test(file)) continue;
      for (const imported of imports) if (above.test(imported)) upward.push(`${file} -> ${imported}`);
    }
    expect(upward).toEqual([]);
  });
});
