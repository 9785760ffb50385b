import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase } from './database.js';
import { parsePgliteSettings } from './pglite-settings.js';

describe('embedded Postgres settings', () => {
  it('parses name=value items and refuses anything else', () => {
    expect(parsePgliteSettings(['shared_buffers=64MB', ' work_mem = 8MB '])).toEqual({
      shared_buffers: '64MB',
      work_mem: '8MB',
    });
    expect(() => parsePgliteSettings(['shared_buffers'])).toThrow(/not name=value/);
    expect(() => parsePgliteSettings(['=8MB'])).toThrow(/not name=value/);
  });

  it('opens PGlite at shared_buffers=16MB, with the settings given on top', async () => {
    const database = await openDatabase({ pgliteSettings: { work_mem: '8MB' } });
    try {
      const shown = async (name: string) =>
        (await sql<{ setting: string }>`select current_setting(${name}) as setting`.execute(database.db))
          .rows[0]?.setting;
      expect(await shown('shared_buffers')).toBe('16MB');
      expect(await shown('work_mem')).toBe('8MB');
      // What initdb wrote into postgresql.conf still holds: the settings are not written there.
      expect(await shown('default_text_search_config')).toBe('pg_catalog.english');
    } finally {
      await database.close();
    }
  });
});
