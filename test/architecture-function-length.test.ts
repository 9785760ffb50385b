/**
 * Issue 32, item 9: functions under 150 lines and files under 500 in src/ (tests excluded),
 * measured on the TypeScript syntax tree by scripts/function-lengths.ts. A function's length
 * counts its nested functions, so a factory that returns an object of closures is one long
 * function. The functions still over the limit are listed with their current length: the list
 * can only shrink. A listed function that grew fails; so does one that shrank while its listed
 * length was not lowered to match, and one now under the limit that is still listed, so the
 * change that shortens a function also lowers or removes its entry.
 *
 * `npx tsx scripts/function-lengths.ts --files` prints the current figures.
 */
import { describe, expect, it } from 'vitest';
import { fileLineLimit, functionLineLimit, measureSourceTree } from '../scripts/function-lengths.js';

/** `file name` -> lines today. */
const longFunctions: Record<string, number> = {};

const longFiles: Record<string, number> = {};

describe('function and file length in src/', () => {
  const { functions, files } = measureSourceTree('src');

  it('measures the whole tree', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(functions.length).toBeGreaterThan(1000);
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
