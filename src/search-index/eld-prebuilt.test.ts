import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPrebuiltEldTable, writePrebuiltEldTable } from './eld-prebuilt.js';
import { buildTable, type CompactNgramTable } from './eld-tables.js';
import { eldLanguageCodes } from './language-detection.js';

describe("ELD's table prebuilt at build time", () => {
  let directory: string;
  let built: CompactNgramTable;
  beforeAll(async () => {
    directory = await mkdtemp(path.join(os.tmpdir(), 'weir-eld-prebuilt-'));
    built = await buildTable(eldLanguageCodes());
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it("reads back the worker's table, element for element", async () => {
    const file = path.join(directory, 'extrasmall.json');
    await writePrebuiltEldTable(built, eldLanguageCodes(), file);
    const read = await readPrebuiltEldTable([...eldLanguageCodes()].reverse(), file);
    expect(read).toBeDefined();
    expect(read?.entryUrl).toBe(built.entryUrl);
    expect({ ...read, starts: Array.from(read?.starts ?? []) }).toEqual({
      ...built,
      starts: Array.from(built.starts),
      languages: new Uint8Array(built.languages),
      scores: new Uint8Array(built.scores),
    });
    // Not an empty table compared with an empty table.
    expect(built.keys.length).toBeGreaterThan(10_000);
    expect(built.languages.length).toBe(built.starts[built.starts.length - 1]);
  });

  it('ignores a missing file, one for other languages, and one built from other ELD data', async () => {
    const file = path.join(directory, 'other.json');
    expect(await readPrebuiltEldTable(eldLanguageCodes(), file)).toBeUndefined();
    await writePrebuiltEldTable(built, eldLanguageCodes(), file);
    expect(await readPrebuiltEldTable(['en'], file)).toBeUndefined();
    const stored = JSON.parse(await readFile(file, 'utf8')) as { source: string };
    await writeFile(file, JSON.stringify({ ...stored, source: `${stored.source}0` }));
    expect(await readPrebuiltEldTable(eldLanguageCodes(), file)).toBeUndefined();
    await writeFile(file, '{"format":');
    expect(await readPrebuiltEldTable(eldLanguageCodes(), file)).toBeUndefined();
  });
});
