/**
 * A Kysely dialect over an embedded PGlite instance, in this thread or on its own
 * (pglite-thread.ts). PGlite is one Postgres backend with one session: a transaction holds
 * it from BEGIN to COMMIT while other statements wait (see the gate in the driver), and
 * statements outside transactions are pipelined.
 * SQL generation is Kysely's own Postgres adapter, so both deployments share one dialect.
 */
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
import { ArrayParameter, toPgliteParameter } from './array-parameter.js';
import type { PgliteSession } from './pglite-thread.js';

export function createPgliteDialect(pglite: PgliteSession): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => createPgliteDriver(pglite),
    createQueryCompiler: () => new PostgresQueryCompiler(),
    createIntrospector: (db: Kysely<unknown>) => new PostgresIntrospector(db),
  };
}

function createPgliteDriver(pglite: PgliteSession): Driver {
  // A transaction needs the session to itself: from BEGIN to COMMIT, statements of other
  // connections wait at the gate. Outside transactions they are not held back: they are
  // handed to PGlite at once and run in arrival order, so on a PGlite thread the next
  // statement is already queued when the last one ends, instead of waiting for this thread
  // to get round to sending it.
  let transactions: Promise<void> = Promise.resolve();
  let gate: Promise<void> | undefined;
  const open = new Map<DatabaseConnection, () => void>();

  function createConnection(): DatabaseConnection {
    const connection: DatabaseConnection = {
      async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
        if (!open.has(connection)) while (gate) await gate;
        const parameters = compiled.parameters.some((value) => value instanceof ArrayParameter)
          ? compiled.parameters.map(toPgliteParameter)
          : compiled.parameters;
        const result = await pglite.query<R>(compiled.sql, parameters);
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
    return connection;
  }

  function endTransaction(connection: DatabaseConnection): void {
    const finish = open.get(connection);
    open.delete(connection);
    finish?.();
  }

  return {
    async init() {},
    async acquireConnection() {
      return createConnection();
    },
    async beginTransaction(connection, settings: TransactionSettings) {
      const previous = transactions;
      let finish!: () => void;
      transactions = new Promise<void>((resolve) => {
        finish = resolve;
      });
      await previous;
      let openGate!: () => void;
      gate = new Promise<void>((resolve) => {
        openGate = resolve;
      });
      open.set(connection, () => {
        gate = undefined;
        openGate();
        finish();
      });
      const isolation = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : '';
      const access = settings.accessMode ? ` ${settings.accessMode}` : '';
      try {
        await pglite.query(`begin${isolation}${access}`);
      } catch (error) {
        endTransaction(connection);
        throw error;
      }
    },
    async commitTransaction(connection) {
      try {
        await pglite.query('commit');
      } finally {
        endTransaction(connection);
      }
    },
    async rollbackTransaction(connection) {
      try {
        await pglite.query('rollback');
      } finally {
        endTransaction(connection);
      }
    },
    async releaseConnection(connection) {
      endTransaction(connection);
    },
    async destroy() {
      await transactions;
      if (!pglite.closed) await pglite.close();
    },
  };
}
