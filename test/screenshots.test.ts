/**
 * `npm test` leaves tracked files alone: browser screenshots go to a temporary directory
 * unless WEIR_WRITE_SCREENSHOTS=1 asks for docs/console/ (test/helpers/screenshots.ts).
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { screenshotDirectory, trackedScreenshots } from './helpers/screenshots.js';

/** Every test source: test/**\/*.ts and src/**\/*.test.ts. */
function testSources(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return testSources(full);
    const isTest = directory.startsWith('test')
      ? entry.name.endsWith('.ts')
      : entry.name.endsWith('.test.ts');
    return isTest ? [full] : [];
  });
}

describe('screenshots', () => {
  it('go to a fresh temporary directory unless asked for docs/console/', () => {
    const directory = screenshotDirectory({});
    expect(existsSync(directory)).toBe(true);
    expect(path.relative(tmpdir(), directory).startsWith('..')).toBe(false);
    const another = screenshotDirectory({});
    expect(another).not.toBe(directory);
    for (const made of [directory, another]) rmSync(made, { recursive: true });
    expect(screenshotDirectory({ WEIR_WRITE_SCREENSHOTS: '1' })).toBe(path.resolve('docs/console'));
    expect(screenshotDirectory({ WEIR_WRITE_SCREENSHOTS: '0' })).not.toBe(trackedScreenshots);
  });

  it('are written only where screenshotDirectory() says, by every test that takes them', () => {
    // The helper and this test name docs/console/ on purpose.
    const exempt = [path.join('test', 'helpers', 'screenshots.ts'), path.join('test', 'screenshots.test.ts')];
    const takers = [...testSources('test'), ...testSources('src')].filter((file) => !exempt.includes(file));
    const offenders = takers.filter((file) => {
      const source = readFileSync(file, 'utf8');
      const namesDocs = /['"`]docs\/console/.test(source);
      const shoots = /\.screenshot\(/.test(source);
      return namesDocs || (shoots && !source.includes('screenshotDirectory('));
    });
    expect(takers.length).toBeGreaterThan(10);
    expect(offenders).toEqual([]);
  });
});
