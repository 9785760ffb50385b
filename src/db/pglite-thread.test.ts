/**
 * The PGlite thread starts before the data dir's lock is taken (issue 35) and must not touch
 * the data dir until `openWhen` resolves: PGlite creates the directory when it opens it, so
 * its absence shows the thread waited. A failed lock ends the thread without opening.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startPgliteThread } from './pglite-thread.js';

describe('startPgliteThread with openWhen', () => {
  let folder: string | undefined;
  afterEach(async () => {
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('opens the data dir only once openWhen resolves', async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'weir-pglite-thread-'));
    const pgdata = path.join(folder, 'pgdata');
    let allow: () => void = () => undefined;
    const openWhen = new Promise<void>((resolve) => {
      allow = resolve;
    });
    const starting = startPgliteThread(pgdata, { openWhen });
    // Long enough for the thread to load PGlite and compile its WebAssembly.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(existsSync(pgdata)).toBe(false);
    allow();
    const session = await starting;
    try {
      expect(existsSync(path.join(pgdata, 'PG_VERSION'))).toBe(true);
      const { rows } = await session.query<{ answer: number }>('select 41 + 1 as answer');
      expect(rows).toEqual([{ answer: 42 }]);
    } finally {
      await session.close();
    }
  }, 120_000);

  it('ends the thread without opening when openWhen rejects', async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'weir-pglite-thread-'));
    const pgdata = path.join(folder, 'pgdata');
    const refused = new Error('the data dir is in use');
    await expect(startPgliteThread(pgdata, { openWhen: Promise.reject(refused) })).rejects.toBe(refused);
    expect(existsSync(pgdata)).toBe(false);
  }, 120_000);
});
