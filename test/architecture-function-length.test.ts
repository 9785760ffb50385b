/**
 * Issue 32, item 9: functions under 150 lines and files under 500 in src/, test/, bench/ and
 * scripts/ (test files, test helpers, benches and build scripts included), measured on the
 * TypeScript syntax tree by scripts/function-lengths.ts. A function's length counts its nested
 * functions, so a factory that returns an object of closures is one long function. In a
 * *.test.ts file the callback given to `describe`, `it`, `test` or `itWhere` is not a function
 * for this rule: it is the outline of a suite or of one test, and a suite run on several
 * targets by `describe.each` is rightly long. The functions declared inside it (a suite's
 * helpers) are measured like any other, and the test file's length is limited like any file's. The functions still over the limit are listed with their current length: the list
 * can only shrink. A listed function that grew fails; so does one that shrank while its listed
 * length was not lowered to match, and one now under the limit that is still listed, so the
 * change that shortens a function also lowers or removes its entry.
 *
 * `npx tsx scripts/function-lengths.ts --files` prints the current figures.
 */
import { describe, expect, it } from 'vitest';
import {
  fileLineLimit,
  functionLineLimit,
  measuredTrees,
  measureFunctions,
  measureSourceTree,
} from '../scripts/function-lengths.js';

/** `file name` -> lines today. */
const longFunctions: Record<string, number> = {};

const longFiles: Record<string, number> = {};

describe('function and file length in src/, test/, bench/ and scripts/', () => {
  const trees = measuredTrees.map((tree) => ({ tree, ...measureSourceTree(tree) }));
  const functions = trees.flatMap((tree) => tree.functions);
  const files = trees.flatMap((tree) => tree.files);

  it('measures the whole tree', () => {
    const counts = Object.fromEntries(trees.map((tree) => [tree.tree, tree.files.length]));
    expect(counts.src).toBeGreaterThan(100);
    expect(counts.test).toBeGreaterThan(100);
    expect(counts.bench).toBeGreaterThan(20);
    expect(counts.scripts).toBeGreaterThan(5);
    expect(functions.length).toBeGreaterThan(5000);
    // Test files, test helpers and build scripts are all measured.
    for (const file of [
      'test/engine.test.ts',
      'src/conversations/analysis.test.ts',
      'test/helpers/test-site.ts',
      'test/helpers/s3rver-launcher.cjs',
      'scripts/build-if-stale.mjs',
    ])
      expect(files.map((entry) => entry.file)).toContain(file);
  });

  it('counts the functions in a test file but not the describe and it callbacks around them', () => {
    const body = Array.from({ length: 200 }, (_, index) => `    expect(${index}).toBe(${index});`).join('\n');
    const text = [
      "describe.each(targets)('suite on $name', (target) => {",
      '  function helper() {',
      body,
      '  }',
      "  it('case', () => {",
      body,
      '  });',
      "  itWhere(true)('other case', async () => {",
      body,
      '  });',
      '});',
    ].join('\n');
    const long = (file: string) =>
      measureFunctions(file, text)
        .filter((entry) => entry.lines > functionLineLimit)
        .map((entry) => entry.name);
    expect(long('test/example.test.ts')).toEqual(['helper']);
    // Outside a test file the same callbacks are functions like any other.
    expect(long('test/helpers/example.ts')).toEqual([
      '<callback of describe.each(targets) suite on $name>',
      'helper',
      '<callback of it case>',
      '<callback of itWhere(true) other case>',
    ]);
  });

  it(`has no function over ${functionLineLimit} lines beyond the listed ones, each at its listed length`, () => {
    const over: Record<string, number> = {};
    for (const entry of functions) {
      if (entry.lines <= functionLineLimit) continue;
      const key = `${entry.file} ${entry.name}`;
      // Two long functions of one name in one file would share an entry and hide each other.
      expect(over[key], `${key} appears twice`).toBeUndefined();
      over[key] = entry.lines;
    }
    const grown = Object.entries(over).filter(
      ([key, lines]) => lines > (longFunctions[key] ?? functionLineLimit),
    );
    expect(grown, 'functions over the limit (split them; the list only shrinks)').toEqual([]);
    const stale = Object.keys(longFunctions).filter((key) => over[key] === undefined);
    expect(stale, 'listed functions now under the limit (remove them from the list)').toEqual([]);
    const shrunk = Object.entries(longFunctions)
      .filter(([key, listed]) => over[key] !== undefined && over[key] < listed)
      .map(([key, listed]) => `${key}: listed ${listed}, now ${over[key]} (lower the entry)`);
    expect(shrunk, 'listed functions that shrank: lower their entry to the new length').toEqual([]);
  });

  it(`has no file over ${fileLineLimit} lines beyond the listed ones, each at its listed length`, () => {
    const over = Object.fromEntries(
      files.filter((entry) => entry.lines > fileLineLimit).map((entry) => [entry.file, entry.lines]),
    );
    const grown = Object.entries(over).filter(([file, lines]) => lines > (longFiles[file] ?? fileLineLimit));
    expect(grown, 'files over the limit').toEqual([]);
    const stale = Object.keys(longFiles).filter((file) => over[file] === undefined);
    expect(stale, 'listed files now under the limit (remove them from the list)').toEqual([]);
    const shrunk = Object.entries(longFiles)
      .filter(([file, listed]) => over[file] !== undefined && over[file] < listed)
      .map(([file, listed]) => `${file}: listed ${listed}, now ${over[file]} (lower the entry)`);
    expect(shrunk, 'listed files that shrank: lower their entry to the new length').toEqual([]);
  });
});
