/**
 * `weir serve` starts opening the database before it loads the rest of the service (issue 35).
 * Embedded PGlite boots on a thread of its own for a second or two. The service thread, in
 * the meantime, loads its modules (Fastify, the routes, the adapters) for about as long. Done
 * one after the other, as before, a start took the sum of the two. The service takes a handle
 * on the database that is still opening (deferred-database.ts), so that it builds the engine
 * and the HTTP app meanwhile too, and listens once the open has ended.
 */
import { mkdir } from 'node:fs/promises';
import { type Database, databaseLocation, openDatabase } from './db/database.js';
import { deferredDatabase, type OpeningDatabase } from './db/deferred-database.js';
import { parsePgliteSettings } from './db/pglite-settings.js';
import { loadSettings, type Settings, SettingsError } from './settings.js';

let early: { key: string; opening: Promise<Database> } | undefined;

function databaseKey(settings: Settings): string {
  return JSON.stringify([
    settings.database_url ?? null,
    settings.data_dir,
    settings.pglite_settings,
    settings.pglite_recycle_idle_ms,
    settings.pglite_recycle_growth_mb,
    settings.idle_gc_ms,
  ]);
}

async function openDatabaseFor(settings: Settings): Promise<Database> {
  let pgliteSettings: Record<string, string>;
  try {
    pgliteSettings = parsePgliteSettings(settings.pglite_settings);
  } catch (error) {
    throw new SettingsError(`pglite_settings: ${(error as Error).message}`);
  }
  await mkdir(settings.data_dir, { recursive: true });
  // Without DATABASE_URL, openDatabase locks the data dir before it opens pgdata/: a second
  // process on the same dir exits (docs/security.md, "One server per data dir"). objects/ is
  // not locked on its own: processes on one PostgreSQL server may share it.
  return openDatabase({
    url: settings.database_url,
    dataDir: settings.data_dir,
    pgliteSettings,
    pgliteRecycle: {
      idleMs: settings.pglite_recycle_idle_ms,
      minGrowthBytes: settings.pglite_recycle_growth_mb * 1024 * 1024,
    },
    pgliteIdleCollectMs: settings.idle_gc_ms,
  });
}

/**
 * Starts opening the database the environment's settings name. Nothing is reported here: bad
 * settings or a failed open surface where the service takes the database (openServiceDatabase).
 */
export function openDatabaseEarly(environment: Record<string, string | undefined>): void {
  let settings: Settings;
  try {
    settings = loadSettings(environment);
  } catch {
    return; // the service's own loadSettings reports it
  }
  const opening = openDatabaseFor(settings);
  opening.catch(() => undefined); // handled by whoever takes it
  early = { key: databaseKey(settings), opening };
}

/**
 * A handle on the database for `settings` (the one opened early when it matches, else opened
 * now), usable before it is open: its statements wait for `opened`.
 */
export function openServiceDatabase(settings: Settings): OpeningDatabase {
  const taken = early;
  early = undefined;
  let opening: Promise<Database>;
  if (taken && taken.key === databaseKey(settings)) opening = taken.opening;
  else {
    if (taken) void taken.opening.then((database) => database.close()).catch(() => undefined);
    opening = openDatabaseFor(settings);
  }
  return deferredDatabase(opening, {
    kind: settings.database_url ? 'postgres' : 'pglite',
    location: databaseLocation({ url: settings.database_url, dataDir: settings.data_dir }),
  });
}
