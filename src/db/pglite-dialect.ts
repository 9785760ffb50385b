/**
 * A Kysely dialect over an embedded PGlite instance. PGlite is one Postgres backend with one
 * session, so the driver hands out a single connection guarded by a queue: a transaction
 * holds it from BEGIN to COMMIT and other queries wait, exactly as they would for a pool of one.
 * SQL generation is Kysely's own Postgres adapter, so both deployments share one dialect.
 */
import type { PGlite } from '@electric-sql/pglite';
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';

export function createPgliteDialect(pglite: PGlite): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => createPgliteDriver(pglite),
    createQueryCompiler: () => new PostgresQueryCompiler(),
    createIntrospector: (db: Kysely<unknown>) => new PostgresIntrospector(db),
  };
}

function createPgliteDriver(pglite: PGlite): Driver {
  const connection: DatabaseConnection = {
    async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
      const result = await pglite.query<R>(compiled.sql, [...compiled.parameters]);
      const affected = result.affectedRows;
      return {
        rows: result.rows,
        ...(affected !== undefined && !/^\s*select/i.test(compiled.sql)
          ? { numAffectedRows: BigInt(affected) }
          : {}),
      };
    },
    async *streamQuery<R>(compiled: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
      // PGlite has no cursors over its JS API; a stream is the whole result in one chunk.
      yield await connection.executeQuery<R>(compiled);
    },
  };
  let tail: Promise<void> = Promise.resolve();
  let release: (() => void) | undefined;

  return {
    async init() {},
    async acquireConnection() {
      const previous = tail;
      let unlock!: () => void;
      tail = new Promise<void>((resolve) => {
        unlock = resolve;
      });
      await previous;
      release = unlock;
      return connection;
    },
    async beginTransaction(_connection, settings: TransactionSettings) {
      const isolation = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : '';
      const access = settings.accessMode ? ` ${settings.accessMode}` : '';
      await pglite.query(`begin${isolation}${access}`);
    },
    async commitTransaction() {
      await pglite.query('commit');
    },
    async rollbackTransaction() {
      await pglite.query('rollback');
    },
    async releaseConnection() {
      const unlock = release;
      release = undefined;
      unlock?.();
    },
    async destroy() {
      await tail;
      if (!pglite.closed) await pglite.close();
    },
  };
}
