/**
 * The database port: embedded PGlite (with pgvector) in the data dir by default, a PostgreSQL
 * server through node-postgres when a URL is given. PGlite in a data dir holds the data dir's
 * lock (data-dir-lock.ts) from before it opens until it is closed. Both are driven through one Kysely
 * instance and one Postgres SQL dialect; callers never see which one is underneath.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { type Dialect, type Driver, Kysely, type LogEvent, PostgresDialect, sql } from 'kysely';
import { recordStatement, registerReadingGauge } from '../metrics/metrics.js';
import { recordStatementSpan } from '../tracing/tracing.js';
import { type DataDirLock, lockDataDir } from './data-dir-lock.js';
import { migrateToLatest } from './migrate.js';
import { createPgliteDialect } from './pglite-dialect.js';
import {
  type PgliteRecycleOptions,
  type RecyclingPgliteSession,
  startRecyclingPgliteThread,
} from './pglite-recycle.js';
import { pgliteStartParams } from './pglite-settings.js';
import { type StatementTime, startPgliteThread } from './pglite-thread.js';
import type { DatabaseSchema } from './schema.js';

export type DatabaseKind = 'pglite' | 'postgres';

/**
 * Session settings of every connection opened here. HNSW returns at most `hnsw.ef_search`
 * rows (pgvector's default is 40); at 100 a vector ranking of the default depth (50) needs no
 * transaction of its own to raise it (search-service.ts). A server without pgvector keeps the
 * name as an unused placeholder.
 */
export const sessionSettings = { hnswEfSearch: 100 } as const;

export interface Database {
  readonly db: Kysely<DatabaseSchema>;
  readonly kind: DatabaseKind;
  /** Where the data lives, without credentials (for logs and health). */
  readonly location: string;
  serverVersion(): Promise<string>;
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * Time per statement when opened with `timeStatements` (benchmarks): on PGlite's thread, the
   * statement itself; on a server, from the pool's request to the answer (waiting for a
   * connection and the round trip included, as a caller waits).
   */
  statementTimes?(): Promise<StatementTime[]>;
  /** Embedded PGlite whose thread is recycled when idle (pglite-recycle.ts): reports each recycle. */
  observeRecycles?: RecyclingPgliteSession['observe'];
}

export interface OpenDatabaseOptions {
  /** A postgres:// URL; when absent the embedded PGlite is used. */
  url?: string | undefined;
  /** Directory for the embedded database; absent = in memory (tests). */
  dataDir?: string | undefined;
  /** Apply pending migrations (default true). */
  migrate?: boolean;
  /**
   * Where embedded PGlite runs: `worker` (its own thread, the default with a data dir, so the
   * service's event loop never waits on WebAssembly Postgres) or `main` (this thread, the
   * default in memory: quicker to start, for tests and one-off tools).
   */
  pgliteThread?: 'worker' | 'main' | undefined;
  /** Time each statement (see `statementTimes`); for benchmarks. */
  timeStatements?: boolean | undefined;
  /** Embedded Postgres settings over pglite-settings.ts's defaults (shared_buffers...). */
  pgliteSettings?: Readonly<Record<string, string>> | undefined;
  /**
   * Embedded PGlite in a data dir on its own thread: reopen the thread when idle to give its
   * grown memory back (pglite-recycle.ts). Absent or idleMs 0 = never.
   */
  pgliteRecycle?: Pick<PgliteRecycleOptions, 'idleMs' | 'minGrowthBytes'> | undefined;
  /** PGlite's thread collects its V8 heap after a quiet window this long (idle-collection.ts); absent or 0 = never. */
  pgliteIdleCollectMs?: number | undefined;
  /** Connections to a server at most (default 10); 1 for a server that serves one session. */
  poolSize?: number | undefined;
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const database = options.url
    ? await openPostgres(options.url, options.poolSize ?? 10, options.timeStatements === true)
    : await openPglite(options.dataDir, {
        thread: options.pgliteThread ?? (options.dataDir ? 'worker' : 'main'),
        timeStatements: options.timeStatements === true,
        startParams: pgliteStartParams(options.pgliteSettings),
        recycle: options.pgliteRecycle,
        idleCollectMs: options.pgliteIdleCollectMs ?? 0,
      });
  try {
    if (options.migrate !== false) await migrateToLatest(database.db);
  } catch (error) {
    await database.close();
    throw error;
  }
  return database;
}

interface PgliteOpening {
  thread: 'worker' | 'main';
  timeStatements: boolean;
  startParams: string[];
  /** Opens the files only after this resolves (the data dir's lock). */
  openWhen?: Promise<void> | undefined;
  recycle: OpenDatabaseOptions['pgliteRecycle'];
  idleCollectMs: number;
}

async function openPglite(dataDir: string | undefined, opening: PgliteOpening): Promise<Database> {
  if (!dataDir) return openPgliteIn(undefined, opening);
  // PGlite is one Postgres backend with no lock of its own: a second process on the same
  // files aborts or silently forks the data. The lock comes before anything is opened; PGlite's
  // thread starts loading beside it (openWhen) and opens pgdata once it is held.
  const location = pgdataOf(dataDir);
  const locked = lockDataDir(dataDir).then(async (lock) => {
    try {
      await mkdir(location, { recursive: true });
      return lock;
    } catch (error) {
      await lock.release();
      throw error;
    }
  });
  let lock: DataDirLock | undefined;
  try {
    const database = await openPgliteIn(location, {
      ...opening,
      openWhen: locked.then((taken) => {
        lock = taken;
      }),
    });
    return {
      ...database,
      async close() {
        await database.close();
        await lock?.release();
      },
    };
  } catch (error) {
    // The open may fail before the lock is taken: wait for it, and release it if it was.
    await (await locked.catch(() => undefined))?.release();
    throw error;
  }
}

/** PGlite in `directory` (absent = in memory) on the given thread. */
async function openPgliteIn(
  directory: string | undefined,
  { thread, timeStatements, startParams, openWhen, recycle, idleCollectMs }: PgliteOpening,
): Promise<Database> {
  const location = directory ? `pglite:${directory}` : 'pglite:memory://';
  if (thread === 'main') {
    await openWhen;
    const pglite = await PGlite.create(directory, { extensions: { vector }, startParams });
    const db = createKysely(createPgliteDialect(pglite), recordStatementTime);
    await applySessionSettings(db);
    return withCommonOperations(db, 'pglite', location);
  }
  // PGlite is one session: set once, it holds for every statement (and a recycled thread's
  // new session is given them again before any other statement).
  const recycling =
    directory && recycle && recycle.idleMs > 0
      ? await startRecyclingPgliteThread(
          directory,
          // A recycle's thread gets the same resolved promise: the lock is still held.
          { timeStatements, startParams, openWhen, idleCollectMs },
          { ...recycle, sessionSetup: [sessionSettingsSql] },
        )
      : undefined;
  const session =
    recycling ??
    (await startPgliteThread(directory, { timeStatements, startParams, openWhen, idleCollectMs }));
  const db = createKysely(createPgliteDialect(session), recordStatementTime);
  if (!recycling) await applySessionSettings(db);
  const database = {
    ...withCommonOperations(db, 'pglite', location),
    ...(recycling ? { observeRecycles: recycling.observe } : {}),
  };
  return timeStatements ? { ...database, statementTimes: () => session.statementTimes() } : database;
}

async function openPostgres(url: string, poolSize: number, timeStatements: boolean): Promise<Database> {
  // pg is loaded only for a server: the embedded default never needs it (15 MB RSS, issue 35).
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    options: `-c hnsw.ef_search=${sessionSettings.hnswEfSearch}`,
  });
  // An idle client that loses its server emits 'error' on the pool; without a listener that
  // would crash the process. The next query reports the problem instead.
  pool.on('error', () => {});
  registerReadingGauge(
    'weir_db_pool_connections',
    'Connections the pool holds to the server.',
    () => pool.totalCount,
  );
  registerReadingGauge('weir_db_pool_idle_connections', 'Pool connections not in use.', () => pool.idleCount);
  registerReadingGauge(
    'weir_db_pool_waiting_clients',
    'Queries waiting for a pool connection.',
    () => pool.waitingCount,
  );
  const times = timeStatements ? new Map<string, { count: number; milliseconds: number }>() : undefined;
  const log = times
    ? (event: LogEvent) => {
        recordStatementTime(event);
        // Keyed as pglite-worker.ts keys them: the first 80 characters, whitespace folded.
        const statement = event.query.sql.replace(/\s+/g, ' ').trim().slice(0, 80);
        const time = times.get(statement) ?? { count: 0, milliseconds: 0 };
        time.count++;
        time.milliseconds += event.queryDurationMillis;
        times.set(statement, time);
      }
    : recordStatementTime;
  const db = createKysely(new PostgresDialect({ pool }), log);
  const database = withCommonOperations(db, 'postgres', describeUrl(url));
  if (!times) return database;
  return {
    ...database,
    statementTimes: async () =>
      [...times]
        .map(([statement, time]) => ({ statement, ...time }))
        .sort((a, b) => b.milliseconds - a.milliseconds),
  };
}

/** Every statement's time (queueing for PGlite's one session or a pool connection included). */
export function recordStatementTime(event: LogEvent): void {
  const seconds = event.queryDurationMillis / 1000;
  recordStatement(event.query.sql, seconds, event.level === 'error');
  recordStatementSpan(event.query.sql, seconds, event.level === 'error' ? event.error : undefined);
}

const sessionSettingsSql = `select set_config('hnsw.ef_search', '${sessionSettings.hnswEfSearch}', false)`;

async function applySessionSettings(db: Kysely<DatabaseSchema>): Promise<void> {
  await sql.raw(sessionSettingsSql).execute(db);
}

export function withCommonOperations(
  db: Kysely<DatabaseSchema>,
  kind: DatabaseKind,
  location: string,
): Database {
  return {
    db,
    kind,
    location,
    async serverVersion() {
      const result = await sql<{ server_version: string }>`show server_version`.execute(db);
      return result.rows[0]?.server_version ?? 'unknown';
    },
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      await db.destroy();
    },
  };
}

/** The embedded database's folder in a data dir. */
function pgdataOf(dataDir: string): string {
  return path.resolve(dataDir, 'pgdata');
}

/** `Database.location` for these options, known before the database is open (deferred-database.ts). */
export function databaseLocation(options: Pick<OpenDatabaseOptions, 'url' | 'dataDir'>): string {
  if (options.url) return describeUrl(options.url);
  return options.dataDir ? `pglite:${pgdataOf(options.dataDir)}` : 'pglite:memory://';
}

/** The driver under each database's Kysely, and the Kyselys whose statements another one now logs. */
const drivers = new WeakMap<Kysely<DatabaseSchema>, Driver>();
const handedOver = new WeakSet<Kysely<DatabaseSchema>>();

/**
 * A Kysely over one driver instance, which another Kysely may share (takeOverDriver): on
 * PGlite the driver holds the transaction gate of the one session, on a server the pool.
 */
function createKysely(dialect: Dialect, log: (event: LogEvent) => void): Kysely<DatabaseSchema> {
  const driver = dialect.createDriver();
  const db: Kysely<DatabaseSchema> = new Kysely<DatabaseSchema>({
    dialect: {
      createAdapter: () => dialect.createAdapter(),
      createDriver: () => driver,
      createQueryCompiler: () => dialect.createQueryCompiler(),
      createIntrospector: (kysely) => dialect.createIntrospector(kysely),
    },
    // Kysely logs through the connection objects it has seen: a server's pooled connection
    // that both Kyselys used would otherwise count each of its statements twice.
    log: (event) => {
      if (!handedOver.has(db)) log(event);
    },
  });
  drivers.set(db, driver);
  return db;
}

/**
 * The driver under `db`, for a Kysely that takes over from it (deferred-database.ts): from
 * now on that one logs the statements, and `db` is used no more (its database's close()
 * still closes the driver).
 */
export function takeOverDriver(db: Kysely<DatabaseSchema>): Driver {
  const driver = drivers.get(db);
  if (!driver) throw new Error('not a Kysely that openDatabase created');
  handedOver.add(db);
  return driver;
}

/** host:port/database of a connection URL, never its credentials. */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return 'postgres (unparseable URL)';
  }
}
