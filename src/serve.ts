/**
 * `weir serve`: opens the ports named by the settings (embedded defaults when unset), starts
 * the orchestrator (resuming any execution a previous run left unfinished), listens, then
 * loads the pipeline files and runs each new or changed runnable one once (readiness answers
 * 503 until then: api/startup-work.ts). SIGINT/SIGTERM stop the
 * server, the orchestrator and the database cleanly (closing the embedded database releases
 * the data dir's lock).
 */
import path from 'node:path';
import { createBuiltinRegistry } from './adapters/builtin.js';
import { describeOutcome, needsAttention } from './api/describe-outcome.js';
import { startMetricsServer } from './api/metrics-server.js';
import { StartupWork } from './api/startup-work.js';
import { buildApp } from './app.js';
import type { Broker } from './broker/broker.js';
import { createMemoryBroker } from './broker/memory.js';
import { connectStompBroker } from './broker/stomp/stomp-broker.js';
import { closeBrowser } from './browser/chromium.js';
import { startEmbeddedMaintenance } from './db/embedded-maintenance.js';
import { missingPgvectorWarning } from './db/pgvector.js';
import { createStorageCatalogueRepository } from './db/storage-catalogue-repository.js';
import { openServiceDatabase } from './early-database.js';
import { loadSharedWordVectors, sharedWordVectorsNeedConversion } from './embedding/word-vectors.js';
import { parseConfigYamlOffThread, warmUpConfigParsing } from './engine/config/parse-thread.js';
import { syncPipelineFiles } from './engine/config/sync-pipeline-files.js';
import { createEngine } from './engine/create-engine.js';
import type { OrchestratorLogger } from './engine/orchestrator.js';
import { createEventBus } from './events/event-bus.js';
import { idleCollectionGrowthBytes, startIdleCollection } from './runtime/idle-collection.js';
import { newTimeOrderedId } from './runtime/time-ordered-ids.js';
import { loadLanguageDetector } from './search-index/language-detection.js';
import { secretOriginWarnings } from './secrets.js';
import { loadSettings, type Settings, SettingsError } from './settings.js';
import { createCatalogedObjectStore } from './storage/cataloged.js';
import { createFilesystemObjectStore } from './storage/fs.js';
import type { ObjectStore } from './storage/object-store.js';
import { logCorrelation, startTracing } from './tracing/tracing.js';

export type ServiceRole = 'all' | 'api' | 'worker';

/** The service's parts, opened and started, not yet listening: `weir serve` and `weir run` share them. */
export interface OpenService {
  settings: Settings;
  app: Awaited<ReturnType<typeof buildApp>>;
  configs: ReturnType<typeof createEngine>['configs'];
  orchestrator: ReturnType<typeof createEngine>['orchestrator'];
  /** Work the service does once it listens (the pipeline files); readiness waits for it. */
  startup: StartupWork;
  /** Stops the orchestrator, the browser, the broker and the database (releasing the data dir). */
  close(): Promise<void>;
}

/**
 * Opens the ports named by the settings (embedded defaults when unset), builds the app and
 * starts the orchestrator, which resumes any execution a previous run left unfinished.
 * `logLevel` overrides the settings' (`weir run` keeps the service quiet under its progress).
 */
export async function openService(
  environment: Record<string, string | undefined>,
  role: ServiceRole,
  options: { logLevel?: string } = {},
): Promise<OpenService> {
  const settings = loadSettings(environment);
  if (role !== 'worker') {
    warmUpSearch();
    // The pipeline files and API bodies are parsed on this thread: it loads while the database opens.
    warmUpConfigParsing();
  }
  // Before anything connects, so that its first statements and requests are traced too.
  const tracing = await startTracing(environment, role);
  let objects: ObjectStore;
  try {
    // The AWS SDK is loaded only when S3 is configured: it is large.
    objects = settings.storage_url
      ? (await import('./storage/s3.js')).createS3ObjectStoreFromSettings(settings)
      : createFilesystemObjectStore(path.join(settings.data_dir, 'objects'));
  } catch (error) {
    throw new SettingsError((error as Error).message);
  }
  // Opened by `weir serve` before it loaded this module (early-database.ts), else opened now,
  // and usable at once: the engine and the app are built while it opens (issue 35), their
  // statements waiting for it, and the service starts only once it is open and migrated.
  const { database, opened } = openServiceDatabase(settings);
  opened.catch(() => undefined); // awaited below, unless a step before it throws
  const storage = createCatalogedObjectStore(objects, createStorageCatalogueRepository(database.db));
  const registry = createBuiltinRegistry();
  // Components created before the app log through it once it exists.
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  const startup = new StartupWork();
  // Begun before the app is built: its growth is measured from the heap it starts at, and the
  // garbage of building and readying the app (now done before the database is open) must count
  // as growth, as it did when the app got ready only as it listened.
  const idleCollection = startServiceIdleCollection(settings.idle_gc_ms, () => app?.log);
  const broker: Broker = settings.broker_url
    ? await connectStompBroker(settings.broker_url, {
        warn: (object, message) => app?.log.warn(object, message),
      })
    : createMemoryBroker();
  const events = createEventBus();
  const now = () => new Date();
  const logger: OrchestratorLogger = {
    info: (object, message) => app?.log.info(object, message),
    warn: (object, message) => app?.log.warn(object, message),
    error: (object, message) => app?.log.error(object, message),
  };
  const { configs, executions, orchestrator } = createEngine({
    settings,
    database,
    registry,
    broker,
    storage,
    events,
    now,
    newId: newTimeOrderedId,
    logger,
    processMessages: role !== 'api',
  });
  app = await buildApp({
    settings,
    database,
    storage,
    registry,
    broker,
    orchestrator,
    events,
    startup,
    // With tracing on, each line logged inside a message's or request's span names its trace.
    logger: {
      level: options.logLevel ?? settings.log_level,
      mixin: logCorrelation,
      ...prettyLogTransport(settings.log_format, process.stdout.isTTY === true),
    },
  });
  // Fastify compiles the routes' schemas as it gets ready: while the database opens too.
  await app.ready();
  try {
    // A bad setting or a data dir another server holds ends the start here, nothing begun.
    await opened;
  } catch (error) {
    idleCollection.stop();
    await app.close();
    await broker.close();
    throw error;
  }
  // PGlite has no autovacuum: this does its work on a timer (nothing on a PostgreSQL server).
  const maintenance = startEmbeddedMaintenance(database, {
    onRun: (report) => app?.log.debug(report, 'embedded database vacuumed'),
    onError: (error) => app?.log.warn({ err: error }, 'embedded database vacuum failed'),
  });
  const log = app.log;
  database.observeRecycles?.(
    (report) =>
      log.info(
        {
          wasmMb: Math.round(report.wasmBytesBefore / 2 ** 20),
          rssMb: [Math.round(report.rssBefore / 2 ** 20), Math.round(report.rssAfter / 2 ** 20)],
          durationMs: Math.round(report.durationMs),
          held: report.held,
        },
        'embedded database thread reopened to give its memory back',
      ),
    (error) => log.warn({ err: error }, 'embedded database thread recycle failed'),
  );
  log.info(
    {
      database: database.location,
      storage: settings.storage_url ?? path.resolve(settings.data_dir, 'objects'),
    },
    'ports open',
  );
  // Said once here; the requests it refuses answer 503 without logging an error each.
  const vectorWarning = role === 'worker' ? undefined : await missingPgvectorWarning(database.db);
  if (vectorWarning) log.warn(vectorWarning);
  events.subscribe((event) => {
    if (event.type === 'execution.completed' || event.type === 'execution.failed') {
      void executions
        .statistics(event.execution_id)
        // The outcome in the line: a completed run may still be partial or empty.
        .then((statistics) =>
          log[needsAttention(event) ? 'warn' : 'info'](
            statistics,
            `execution ${event.status}: ${describeOutcome(event)}`,
          ),
        );
    }
  });
  await orchestrator.start();
  const close = async () => {
    idleCollection.stop();
    await app.close();
    await orchestrator.stop(); // with it the HNSW builds: one in progress finishes, one not begun waits for the next start
    await closeBrowser(); // the Chromium of web_crawler, if one was started
    await broker.close();
    await maintenance.stop();
    await database.close();
    await tracing?.shutdown(); // sends the spans still buffered
  };
  return { settings, app, configs, orchestrator, startup, close };
}

/** The service thread's idle heap collection (runtime/idle-collection.ts), each logged once the app exists. */
function startServiceIdleCollection(windowMs: number, log: () => OpenService['app']['log'] | undefined) {
  return startIdleCollection({
    windowMs,
    minGrowthBytes: idleCollectionGrowthBytes,
    onCollect: (report) =>
      log()?.info(
        {
          heapMb: [Math.round(report.heapBytesBefore / 2 ** 20), Math.round(report.heapBytesAfter / 2 ** 20)],
          durationMs: Math.round(report.durationMs),
        },
        'heap collected as the service went quiet',
      ),
  });
}

/**
 * Starts loading what the first searches need, in the background while the database opens:
 * the language detector's tables (read from the build's dist/eld-tables/ file in milliseconds,
 * else built on a worker thread; ingestion needs them too) and,
 * when no build or earlier run left their file, the word vectors of query expansion (a
 * conversion of seconds on a worker thread). With the file there, the first query reads its
 * words in milliseconds (the rows stay in the file: word-vectors.ts), and a service no one
 * searches does not hold them (issue 35).
 * Searches that come before either is ready wait on the same promises without blocking the
 * event loop, so the first 50 concurrent queries after a start all answer
 * (test/first-queries.test.ts). A failure here shows again, and is handled, where they are used.
 */
function warmUpSearch(): void {
  loadLanguageDetector().catch(() => undefined);
  sharedWordVectorsNeedConversion()
    .then((convert) => (convert ? loadSharedWordVectors() : undefined))
    .catch(() => undefined);
}

/**
 * `all` runs everything in one process. With a shared database and broker, `api` instances
 * serve HTTP and publish work; `worker` instances process messages and listen on no port.
 */
export async function startService(
  environment: Record<string, string | undefined> = process.env,
  role: ServiceRole = 'all',
): Promise<void> {
  const {
    settings,
    app: server,
    configs,
    orchestrator,
    startup,
    close,
  } = await openService(environment, role);
  const log = server.log;
  if (settings.api_keys.length === 0) {
    log.warn('WEIR_API_KEYS is not set: the API is open to anyone who can reach it');
  }
  for (const warning of secretOriginWarnings(settings)) log.warn(warning);

  let closing = false;
  let metricsServer: Awaited<ReturnType<typeof startMetricsServer>> | undefined;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    log.info(`${signal}: shutting down`);
    await close();
    await metricsServer?.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));

  if (settings.metrics_port !== undefined) {
    // Closed at shutdown, after the app (which is ready: it takes no more hooks).
    metricsServer = await startMetricsServer(settings, settings.metrics_port);
    log.info(`metrics at http://${settings.host}:${settings.metrics_port}/metrics`);
  }
  if (role === 'worker') {
    log.info('Weir worker started: processing messages, no API port');
    return;
  }
  // The pipeline files load after the server listens (issue 35: about a second of a start):
  // begun first, so that readiness and the pipeline routes wait for them from the first request.
  const endPipelineFiles = startup.begin('pipeline files');
  const address = await server.listen({ host: settings.host, port: settings.port });
  log.info(
    `Weir (${role}) is listening on ${address}: API under ${address}/api/v1, health at ${address}/api/v1/system/health, interactive docs at ${address}/docs`,
  );
  loadPipelineFiles(settings.pipelines_dir, configs, orchestrator, log).then(
    () => {
      endPipelineFiles();
      log.info('ready: the pipeline files are loaded');
    },
    (error: unknown) => {
      // As a failed /system/reload: the configs stay as far as the load got; the requests
      // that waited go on, and readiness answers by the components again.
      endPipelineFiles();
      if (!closing) log.error({ err: error }, 'loading the pipeline files failed');
    },
  );
}

/**
 * Stores each pipeline file of `folder` as a config (new, changed or unchanged) and runs each
 * new or changed runnable one once, so a fresh start shows the engine at work.
 */
async function loadPipelineFiles(
  folder: string,
  configs: OpenService['configs'],
  orchestrator: OpenService['orchestrator'],
  log: OpenService['app']['log'],
): Promise<void> {
  for (const result of await syncPipelineFiles(folder, configs)) {
    const report = result.config?.validation_report;
    const summary = report
      ? `${report.is_valid ? 'valid' : 'INVALID'}, ${report.error_count} errors, ${report.warning_count} warnings`
      : result.error;
    log[result.outcome === 'failed' ? 'warn' : 'info'](
      { file: result.file, config_id: result.config?.id },
      `pipeline file ${result.outcome}: ${summary}`,
    );
    const changed = result.outcome === 'created' || result.outcome === 'updated';
    if (changed && result.config?.is_runnable && (await runsOnLoad(result.config.config_yaml))) {
      const execution = await orchestrator.run(result.config.id);
      log.info({ execution_id: execution.id, file: result.file }, 'example pipeline started');
    }
  }
}

/** A pipeline file runs when loaded unless it says `run_on_load: false` (it needs the network, say). */
async function runsOnLoad(configYaml: string): Promise<boolean> {
  const parsed = await parseConfigYamlOffThread(configYaml);
  return !(parsed.ok && (parsed.value as { run_on_load?: unknown } | null)?.run_on_load === false);
}

/**
 * Structured JSON is the default a log shipper reads; a person at a terminal gets pino-pretty
 * (in pino's transport thread, off the event loop).
 */
export function prettyLogTransport(format: Settings['log_format'], terminal: boolean) {
  const pretty = format === 'pretty' || (format === 'auto' && terminal);
  return pretty
    ? {
        transport: {
          target: 'pino-pretty',
          options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' },
        },
      }
    : {};
}
