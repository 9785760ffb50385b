/**
 * The databases every database test runs on: embedded PGlite always, and the PostgreSQL
 * server too when DATABASE_URL is set (CI sets it). Each `open()` gives a fresh, migrated,
 * empty database: an in-memory PGlite, or a new database on the server dropped at close.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { type Database, openDatabase } from '../../src/db/database.js';

export interface DatabaseTarget {
  readonly name: 'pglite' | 'postgres';
  open(): Promise<TestDatabase>;
}

export interface TestDatabase extends Database {
  /**
   * A second handle (its own connection pool) on the same server database, as another
   * instance would have; absent on PGlite, which one process opens once.
   */
  openAnotherHandle?(): Promise<Database>;
  /** The server database's URL; absent on PGlite. */
  url?: string;
}

export function databaseTargets(): DatabaseTarget[] {
  const targets: DatabaseTarget[] = [{ name: 'pglite', open: () => openDatabase({}) }];
  const serverUrl = process.env.DATABASE_URL;
  if (serverUrl) targets.push({ name: 'postgres', open: () => openFreshServerDatabase(serverUrl) });
  return targets;
}

async function openFreshServerDatabase(serverUrl: string): Promise<TestDatabase> {
  const name = `weir_test_${randomBytes(6).toString('hex')}`;
  await administer(serverUrl, `create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ url: url.toString() });
  return {
    ...database,
    url: url.toString(),
    openAnotherHandle: () => openDatabase({ url: url.toString(), migrate: false }),
    async close() {
      await database.close();
      await administer(serverUrl, `drop database if exists ${name} with (force)`);
    },
  };
}

async function administer(serverUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
