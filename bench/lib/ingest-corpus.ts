/**
 * Ingests a site end to end on the embedded defaults, as bench:ingest measures it and
 * bench:quality searches it: sitemap_parser -> url_expander -> web_scraper -> html_to_markdown
 * -> smart_segmenter -> segment_publisher -> embedding_generator (which fills the knowledge
 * index), on PGlite in a data dir (or a PostgreSQL server), the in-process broker and the
 * filesystem store. Waits for the execution to end, measures when searches rank the new vectors
 * exactly (ingest-readiness.ts), and waits for the model's HNSW graph.
 */
import path from 'node:path';
import { uuidv7 } from 'uuidv7';
import { createBuiltinRegistry } from '../../src/adapters/builtin.js';
import { createMemoryBroker } from '../../src/broker/memory.js';
import { connectStompBroker } from '../../src/broker/stomp/stomp-broker.js';
import { type Database, openDatabase } from '../../src/db/database.js';
import { createStorageCatalogueRepository } from '../../src/db/storage-catalogue-repository.js';
import { createEngine } from '../../src/engine/create-engine.js';
import { createEventBus } from '../../src/events/event-bus.js';
import type { Settings } from '../../src/settings.js';
import { createCatalogedObjectStore } from '../../src/storage/cataloged.js';
import { createFilesystemObjectStore } from '../../src/storage/fs.js';
import { bounded } from './checks.js';
import { measureSearchReadiness, type SearchReadiness } from './ingest-readiness.js';
import { benchPgliteSettings } from './pglite-settings.js';
import { type ServerCpuSpent, serverCpu, serverCpuSince } from './server-cpu.js';
import { describeThreadCpu, threadCpu } from './thread-cpu.js';

export interface IngestedCorpus {
  /** Still open: the caller reads, searches and closes it. */
  database: Database;
  executionId: string;
  /** Wall time from run to the execution's end. */
  seconds: number;
  /** CPU seconds (user + system) of this process from the run request to the execution's end. */
  cpu: number;
  /** Searches asked as the run ended: when they were answered, exactly (ingest-readiness.ts). */
  readiness: SearchReadiness;
  /** Wall time from the run request until the model's HNSW graph was built. */
  graphBuiltSeconds: number;
  failedMessages: number;
  /** CPU by thread from the run request to the execution's end (before the index build). */
  threads: string;
  /** CPU by thread from the execution's end until the readiness searches were answered from memory. */
  indexThreads: string;
  /** The main thread's CPU seconds over the run (as `cpu`). */
  mainThreadCpu: number;
  /** The local PostgreSQL server's, the broker's and the machine's CPU over the run (server-cpu.ts). */
  serverCpu: ServerCpuSpent;
}

/**
 * The pipeline ingested. embedding_generator takes batches of 256: each batch is one index
 * transaction whose statistics trigger upserts every lexeme of the batch once and holds those
 * rows until its commit, so batches take turns; 64 upserted the same lexemes four times as
 * often (docs/benchmarks.md, "Ingestion": the server path).
 */
export function corpusPipelineYaml(sitemapUrl: string): string {
  return `name: bench-ingest
init_message:
  route: discover
  payload: { url: ${JSON.stringify(sitemapUrl)} }
routes:
  - id: discover
    adapters:
      - type: sitemap_parser
      - type: url_expander
        destination: pages
  - id: pages
    adapters:
      - type: web_scraper
        config: { rate_limit: 1000 }
        concurrency: 16
      - type: html_to_markdown
        concurrency: 4
      - type: smart_segmenter
        concurrency: 4
      - type: segment_publisher
        destination: embed
  - id: embed
    adapters:
      - type: embedding_generator
        batch: { size: 256, max_wait_ms: 20 }
        concurrency: 4
`;
}

export function cpuSeconds(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1e6;
}

export type BenchEngine = Awaited<ReturnType<typeof startBenchEngine>>;

/**
 * The engine on the embedded defaults (PGlite in `<dataDir>/pgdata`, or a PostgreSQL server;
 * in-process broker; objects in `<dataDir>/objects`), started. The caller stops it.
 */
export async function startBenchEngine(options: {
  dataDir: string;
  databaseUrl?: string | undefined;
  /** A STOMP broker (RabbitMQ) instead of the in-process queues: the server path. */
  brokerUrl?: string | undefined;
  timeStatements?: boolean | undefined;
  settings?: Settings | undefined;
}) {
  const database = await openDatabase(
    options.databaseUrl
      ? { url: options.databaseUrl, timeStatements: options.timeStatements }
      : {
          dataDir: options.dataDir,
          timeStatements: options.timeStatements,
          pgliteSettings: benchPgliteSettings,
        },
  );
  const storage = createCatalogedObjectStore(
    createFilesystemObjectStore(path.join(options.dataDir, 'objects')),
    createStorageCatalogueRepository(database.db),
  );
  const events = createEventBus();
  const engine = createEngine({
    database,
    registry: createBuiltinRegistry(),
    broker: options.brokerUrl ? await connectStompBroker(options.brokerUrl) : createMemoryBroker(),
    storage,
    events,
    now: () => new Date(),
    newId: uuidv7,
    logger: { info: () => {}, warn: () => {}, error: (object, message) => console.error(message, object) },
    ...(options.settings ? { settings: options.settings } : {}),
  });
  await engine.orchestrator.start();
  return { ...engine, database, storage, events };
}

/**
 * Stores `configYaml`, runs it and waits for it to end: wall time from the run request to the
 * end event, CPU seconds of the process (every thread) over the same span, and the statistics.
 */
export async function runTimed(engine: BenchEngine, configYaml: string) {
  const config = await engine.configs.create({ config_yaml: configYaml });
  if (!config.is_runnable) throw new Error(JSON.stringify(config.validation_report, null, 2));
  return runStoredTimed(engine, config.id);
}

/** runTimed for a config already stored (a second run of the same config). */
export async function runStoredTimed(engine: BenchEngine, configId: string) {
  const finished = new Promise<string>((resolve) =>
    engine.events.subscribe((event) => {
      if (event.type.startsWith('execution.') && event.type !== 'execution.started') resolve(event.type);
    }),
  );
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  const threadsAtStart = threadCpu();
  const serversAtStart = serverCpu();
  const execution = await engine.orchestrator.run(configId);
  const outcome = await bounded(
    finished,
    Number(process.env.BENCH_TIMEOUT_S ?? 3600) * 1000,
    'the execution did not end (BENCH_TIMEOUT_S)',
  );
  const seconds = (performance.now() - started) / 1000;
  const serversAtEnd = serverCpu();
  const threadsAtEnd = threadCpu();
  const mainAt = (threads: typeof threadsAtEnd) => {
    const main = threads.get(process.pid);
    return main ? main.user + main.system : Number.NaN;
  };
  const threads = describeThreadCpu(threadsAtStart, threadsAtEnd);
  return {
    executionId: execution.id,
    outcome,
    seconds,
    /** performance.now() and process.cpuUsage() at the run request, for spans past its end. */
    startedAt: started,
    cpuStart,
    cpu: cpuSeconds(cpuStart),
    /** CPU seconds per thread from the run request to the execution's end (thread-cpu.ts). */
    threads,
    mainThreadCpu: mainAt(threadsAtEnd) - mainAt(threadsAtStart),
    /** The server processes' CPU over the same span: pass to serverCpuSince with a database name. */
    serversAtStart,
    serversAtEnd,
    statistics: await engine.executions.statistics(execution.id),
  };
}

export async function ingestCorpus(options: {
  sitemapUrl: string;
  /** The embedded database goes to `<dataDir>/pgdata`, objects to `<dataDir>/objects`. */
  dataDir: string;
  /** A PostgreSQL server instead of the embedded database (give it an empty database). */
  databaseUrl?: string | undefined;
  brokerUrl?: string | undefined;
  timeStatements?: boolean | undefined;
  settings?: Settings | undefined;
}): Promise<IngestedCorpus> {
  const engine = await startBenchEngine(options);
  const { database, orchestrator, vectorIndexes } = engine;
  try {
    const run = await runTimed(engine, corpusPipelineYaml(options.sitemapUrl));
    const threadsAtEnd = threadCpu();
    // Ready: searches asked as the run ends rank the new vectors exactly (ingest-readiness.ts).
    const readiness = await measureSearchReadiness(database, engine.embedders, run.startedAt);
    const indexThreads = describeThreadCpu(threadsAtEnd);
    // The model's HNSW graph: built at the first quiet moment on PGlite, at the end on a server.
    await vectorIndexes.whenBuilt();
    const graphBuiltSeconds = (performance.now() - run.startedAt) / 1000;
    if (run.outcome !== 'execution.completed')
      throw new Error(`${run.outcome}: ${JSON.stringify(run.statistics)}`);
    return {
      database,
      executionId: run.executionId,
      seconds: run.seconds,
      cpu: run.cpu,
      readiness,
      graphBuiltSeconds,
      failedMessages: run.statistics.failed_messages,
      threads: run.threads,
      indexThreads,
      mainThreadCpu: run.mainThreadCpu,
      serverCpu: serverCpuSince(
        run.serversAtStart,
        options.databaseUrl ? new URL(options.databaseUrl).pathname.slice(1) : undefined,
        run.serversAtEnd,
      ),
    };
  } catch (error) {
    await orchestrator.stop();
    await database.close();
    throw error;
  } finally {
    if (orchestrator.isRunning()) await orchestrator.stop();
  }
}
