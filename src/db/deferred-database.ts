/**
 * A database handle usable before the database is open (issue 35). `weir serve` builds the
 * engine and the HTTP app (Fastify's routes, their schemas compiled) while embedded PGlite
 * boots on its thread; before, it built them only once the open and the migrations had
 * ended, and a second start waited for the two one after the other. Statements sent through
 * the handle meanwhile wait until the database is open and migrated, then run on the same
 * driver (PGlite's transaction gate, or the server's pool) that the migrations used. The
 * service still listens only once `opened` resolves, so health never answers before the
 * database can serve.
 */
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
} from 'kysely';
import {
  type Database,
  type DatabaseKind,
  recordStatementTime,
  takeOverDriver,
  withCommonOperations,
} from './database.js';
import type { DatabaseSchema } from './schema.js';

export interface OpeningDatabase {
  /** Usable at once; its statements wait for the open. */
  database: Database;
  /** Resolves once the database is open and migrated; rejects as the open did (the handle then fails every statement). */
  opened: Promise<void>;
}

/** A handle on the database `opening` resolves to (openDatabase's, migrations included). */
export function deferredDatabase(
  opening: Promise<Database>,
  known: { kind: DatabaseKind; location: string },
): OpeningDatabase {
  const driver = opening.then((database) => takeOverDriver(database.db));
  driver.catch(() => undefined); // reported through `opened` and each statement
  const db = new Kysely<DatabaseSchema>({ dialect: deferredDialect(driver), log: recordStatementTime });
  const database: Database = {
    ...withCommonOperations(db, known.kind, known.location),
    async close() {
      // The opened database closes the driver both Kyselys share (and releases the data dir).
      await (await opening.catch(() => undefined))?.close();
    },
    observeRecycles(observer, onError) {
      opening.then(
        (opened) => opened.observeRecycles?.(observer, onError),
        () => undefined,
      );
    },
  };
  return { database, opened: driver.then(() => undefined) };
}

function deferredDialect(driver: Promise<Driver>): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => deferredDriver(driver),
    createQueryCompiler: () => new PostgresQueryCompiler(),
    createIntrospector: (db) => new PostgresIntrospector(db),
  };
}

/**
 * Kysely initialises a driver before its first connection: here that waits for the open.
 * Connections are wrappers of the opened driver's, so that Kysely's statement log (which
 * wraps each connection object it sees) counts them once; transactions go to the opened
 * driver with its own connection.
 */
function deferredDriver(opening: Promise<Driver>): Driver {
  let opened: Driver | undefined;
  const inner = new WeakMap<DatabaseConnection, DatabaseConnection>();
  const driver = (): Driver => {
    if (!opened) throw new Error('the database is not open');
    return opened;
  };
  const innerOf = (connection: DatabaseConnection) => inner.get(connection) ?? connection;
  return {
    async init() {
      const taken = await opening;
      await taken.init();
      opened = taken;
    },
    async acquireConnection() {
      const connection = await driver().acquireConnection();
      const wrapper: DatabaseConnection = {
        executeQuery: <R>(compiled: CompiledQuery): Promise<QueryResult<R>> =>
          connection.executeQuery<R>(compiled),
        streamQuery: <R>(compiled: CompiledQuery, chunkSize?: number) =>
          connection.streamQuery<R>(compiled, chunkSize),
      };
      inner.set(wrapper, connection);
      return wrapper;
    },
    beginTransaction: (connection, settings) => driver().beginTransaction(innerOf(connection), settings),
    commitTransaction: (connection) => driver().commitTransaction(innerOf(connection)),
    rollbackTransaction: (connection) => driver().rollbackTransaction(innerOf(connection)),
    releaseConnection: (connection) => driver().releaseConnection(innerOf(connection)),
    // Savepoints exist where the opened driver has them (a server's; PGlite's dialect has none).
    savepoint: (connection, name, compile) => {
      const taken = driver();
      if (!taken.savepoint) throw new Error('The `savepoint` method is not supported by this driver');
      return taken.savepoint(innerOf(connection), name, compile);
    },
    rollbackToSavepoint: (connection, name, compile) => {
      const taken = driver();
      if (!taken.rollbackToSavepoint)
        throw new Error('The `rollbackToSavepoint` method is not supported by this driver');
      return taken.rollbackToSavepoint(innerOf(connection), name, compile);
    },
    releaseSavepoint: (connection, name, compile) => {
      const taken = driver();
      if (!taken.releaseSavepoint)
        throw new Error('The `releaseSavepoint` method is not supported by this driver');
      return taken.releaseSavepoint(innerOf(connection), name, compile);
    },
    // Closed by the opened database's close() (see deferredDatabase).
    async destroy() {},
  };
}
