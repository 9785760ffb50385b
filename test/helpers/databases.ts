/**
 * The databases every database test runs on: embedded PGlite always, and the PostgreSQL
 * server too when DATABASE_URL is set (CI sets it). Each `open()` gives a fresh, migrated,
 * empty database: an in-memory PGlite, or a new database on the server dropped at close.
 */
import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import pg from 'pg';
import { type Database, openDatabase } from '../../src/db/database.js';

export interface DatabaseTarget {
  readonly name: 'pglite' | 'postgres' | 'pglite-wire';
  open(): Promise<TestDatabase>;
}

/** A target and whether it has pgvector (vector search, RRF, HNSW indexes). */
export interface VectorDatabaseTarget extends DatabaseTarget {
  readonly vectors: boolean;
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

/**
 * The targets of the vector, RRF, chat and index tests: those of databaseTargets(), each with
 * whether it has pgvector (the server is asked), plus PGlite with pgvector served over the
 * PostgreSQL wire protocol (@electric-sql/pglite-socket) and reached through node-postgres, so
 * the server code path is tested with vectors even where the server has no pgvector.
 */
export async function vectorDatabaseTargets(): Promise<VectorDatabaseTarget[]> {
  const targets: VectorDatabaseTarget[] = [];
  for (const target of databaseTargets()) {
    const vectors = target.name === 'pglite' || (await serverHasPgvector(process.env.DATABASE_URL as string));
    targets.push({ ...target, vectors });
  }
  targets.push({ name: 'pglite-wire', vectors: true, open: openPgliteOverWire });
  return targets;
}

async function serverHasPgvector(serverUrl: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const result = await client.query(`select 1 from pg_available_extensions where name = 'vector'`);
    return (result.rowCount ?? 0) > 0;
  } finally {
    await client.end();
  }
}

async function openPgliteOverWire(): Promise<TestDatabase> {
  const pglite = await PGlite.create({ extensions: { vector } });
  const server = new PGLiteSocketServer({ db: pglite, host: '127.0.0.1', port: 0 });
  await server.start();
  const url = `postgres://postgres@${server.getServerConn()}/postgres`;
  // One session behind the socket: one connection, so no two transactions interleave in it.
  const database = await openDatabase({ url, poolSize: 1 });
  return {
    ...database,
    url,
    async close() {
      await database.close();
      await server.stop();
      await pglite.close();
    },
  };
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
