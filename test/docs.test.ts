/** The documentation that must not drift from the code. */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { renderAdapterDocs } from '../src/adapters/adapter-docs.js';
import { createBuiltinRegistry } from '../src/adapters/builtin.js';
import { findingCodes } from '../src/engine/config/finding-codes.js';
import { errorCatalogue } from '../src/errors.js';
import { sourceFiles } from './helpers/source-files.js';

/** Codes documented as table rows: `| E202 | ...`. */
function documentedCodes(markdown: string): Set<string> {
  return new Set([...markdown.matchAll(/^\|\s*([A-Za-z0-9_]+)\s*\|/gm)].map((match) => match[1] as string));
}

describe('docs', () => {
  it('documents every validation finding code used in src/', async () => {
    const documented = documentedCodes(await readFile('docs/validation-codes.md', 'utf8'));
    const used = new Set<string>(Object.keys(findingCodes));
    for (const file of await sourceFiles('src')) {
      const text = await readFile(file, 'utf8');
      for (const match of text.matchAll(/['"`]([EW]\d{3})['"`]/g)) used.add(match[1] as string);
    }
    const missing = [...used].filter((code) => !documented.has(code));
    expect(missing, 'codes missing from docs/validation-codes.md').toEqual([]);
    expect(used.size).toBeGreaterThan(15);
  });

  it('documents every error code of the catalogue with its status', async () => {
    const markdown = await readFile('docs/errors.md', 'utf8');
    for (const [code, entry] of Object.entries(errorCatalogue)) {
      expect(markdown, code).toMatch(new RegExp(`^\\| ${code} \\| ${entry.status} \\|`, 'm'));
    }
  });

  it('has an up-to-date docs/adapters.md (run npm run docs:adapters)', async () => {
    const current = await readFile('docs/adapters.md', 'utf8');
    expect(current).toBe(renderAdapterDocs(createBuiltinRegistry().list()));
  });
});
