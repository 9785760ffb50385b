/**
 * No call on a `let` collection whose arguments await (`controls.set(id, await write())`).
 * JavaScript reads `controls` before the await: if another task replaces the collection
 * meanwhile (a reload assigning a new Map), the call lands on the old one and is lost. It lost
 * a route that a new run had brought back on the PostgreSQL server under load
 * (src/engine/route-state.ts). Await into a constant first, then call.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { sourceFiles } from './helpers/source-files.js';

/** The text of the call's arguments that starts at `open` (a `(`), to its matching `)`. */
function argumentsAt(source: string, open: number): string {
  let depth = 0;
  for (let index = open; index < source.length; index++) {
    if (source[index] === '(') depth++;
    else if (source[index] === ')' && --depth === 0) return source.slice(open + 1, index);
  }
  return source.slice(open + 1);
}

/** Each `name.method(… await …)` whose `name` is declared with `let` in the same file. */
function awaitsIntoLet(source: string): string[] {
  const names = new Set([...source.matchAll(/\blet\s+([A-Za-z_][\w]*)/g)].map((match) => match[1] as string));
  const found: string[] = [];
  for (const match of source.matchAll(/(?<![\w$.])([A-Za-z_]\w*)\.(\w+)\(/g)) {
    const [call, name, method] = match;
    if (!names.has(name as string)) continue;
    const open = (match.index as number) + call.length - 1;
    // An await inside an async callback among the arguments runs later, not before the call.
    const evaluatedFirst = argumentsAt(source, open).split(/\basync\b/)[0] as string;
    if (/\bawait\b/.test(evaluatedFirst)) found.push(`${name}.${method}`);
  }
  return found;
}

describe('calls on let collections in src/', () => {
  it('finds the shape it forbids', () => {
    expect(awaitsIntoLet('let controls = new Map();\ncontrols.set(id, await write());')).toEqual([
      'controls.set',
    ]);
    expect(
      awaitsIntoLet('let controls = new Map();\nconst c = await write();\ncontrols.set(id, c);'),
    ).toEqual([]);
  });

  it('never await inside their arguments', async () => {
    const files = await sourceFiles('src');
    expect(files.length).toBeGreaterThan(100);
    const found: Record<string, string[]> = {};
    for (const file of files) {
      const calls = awaitsIntoLet(await readFile(file, 'utf8'));
      if (calls.length > 0) found[file] = calls;
    }
    expect(found).toEqual({});
  });
});
