/**
 * `npm start` builds only when the sources changed since the last build (issue 17 item 13):
 * scripts/build-if-stale.mjs run in a scratch project whose "tsc" records that it ran.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const script = path.resolve('scripts/build-if-stale.mjs');

describe('build-if-stale', () => {
  let project: string;
  afterAll(async () => {
    if (project) await rm(project, { recursive: true, force: true });
  });

  it('builds without a stamp, skips while nothing changed, builds again after a change', async () => {
    project = await mkdtemp(path.join(tmpdir(), 'weir-build-'));
    for (const file of ['tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'])
      await writeFile(path.join(project, file), '{}');
    await mkdir(path.join(project, 'src'));
    await writeFile(path.join(project, 'src/main.ts'), 'export {};');
    // A stand-in for the compiler: it leaves a mark and the dist folder.
    await mkdir(path.join(project, 'node_modules/typescript/bin'), { recursive: true });
    await writeFile(
      path.join(project, 'node_modules/typescript/bin/tsc'),
      "const fs = require('node:fs'); fs.mkdirSync('dist', { recursive: true }); fs.appendFileSync('built', 'x');",
    );
    // And for the console's bundler.
    await mkdir(path.join(project, 'scripts'));
    await mkdir(path.join(project, 'console'));
    await writeFile(path.join(project, 'console/main.ts'), 'export {};');
    await writeFile(
      path.join(project, 'scripts/build-console.mjs'),
      "import fs from 'node:fs'; fs.appendFileSync('console-built', 'x');",
    );
    // And for the word vectors' conversion.
    await writeFile(
      path.join(project, 'scripts/build-word-vectors.mjs'),
      "import fs from 'node:fs'; fs.appendFileSync('vectors-built', 'x');",
    );
    // And for the language tables' pruning.
    await writeFile(
      path.join(project, 'scripts/build-eld-tables.mjs'),
      "import fs from 'node:fs'; fs.appendFileSync('language-tables-built', 'x');",
    );
    // And for the bundler of dist/.
    await writeFile(
      path.join(project, 'scripts/bundle-dist.mjs'),
      "import fs from 'node:fs'; fs.appendFileSync('bundled', 'x');",
    );
    const start = () => execFileSync(process.execPath, [script], { cwd: project, encoding: 'utf8' });
    const builds = () =>
      existsSync(path.join(project, 'built')) ? readFileSync(path.join(project, 'built'), 'utf8').length : 0;

    start();
    expect(builds()).toBe(1);
    expect(start()).toContain('build is up to date');
    expect(builds()).toBe(1);
    // A source newer than the stamp.
    const later = new Date(Date.now() + 5_000);
    await utimes(path.join(project, 'src/main.ts'), later, later);
    start();
    expect(builds()).toBe(2);
    // The console's sources count too, and the console is bundled with every build.
    const evenLater = new Date(Date.now() + 10_000);
    await utimes(path.join(project, 'console/main.ts'), evenLater, evenLater);
    start();
    expect(builds()).toBe(3);
    expect(readFileSync(path.join(project, 'console-built'), 'utf8')).toBe('xxx');
    expect(readFileSync(path.join(project, 'vectors-built'), 'utf8')).toBe('xxx');
    expect(readFileSync(path.join(project, 'language-tables-built'), 'utf8')).toBe('xxx');
    expect(readFileSync(path.join(project, 'bundled'), 'utf8')).toBe('xxx');
  });
});
