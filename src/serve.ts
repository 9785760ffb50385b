/**
 * `weir serve`: opens the ports named by the settings (embedded defaults when unset), loads
 * the pipeline files, and listens. SIGINT/SIGTERM close the server and the database cleanly.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { uuidv7 } from 'uuidv7';
import { createBuiltinRegistry } from './adapters/builtin.js';
import { buildApp } from './app.js';
import { createConfigsRepository } from './db/configs-repository.js';
import { openDatabase } from './db/database.js';
import { createConfigStore } from './engine/config/config-store.js';
import { syncPipelineFiles } from './engine/config/sync-pipeline-files.js';
import { loadSettings, SettingsError } from './settings.js';
import { createFilesystemObjectStore } from './storage/fs.js';

export async function startService(
  environment: Record<string, string | undefined> = process.env,
): Promise<void> {
  const settings = loadSettings(environment);
  if (settings.storage_url) {
    throw new SettingsError(
      'STORAGE_URL (S3) is not supported yet; unset it to store objects under WEIR_DATA_DIR',
    );
  }
  await mkdir(settings.data_dir, { recursive: true });
  const database = await openDatabase({ url: settings.database_url, dataDir: settings.data_dir });
  const storage = createFilesystemObjectStore(path.join(settings.data_dir, 'objects'));
  const registry = createBuiltinRegistry();
  const app = await buildApp({
    settings,
    database,
    storage,
    registry,
    logger: { level: settings.log_level },
  });
  const log = app.log;
  log.info(
    { database: database.location, storage: path.resolve(settings.data_dir, 'objects') },
    'ports open',
  );
  if (settings.api_keys.length === 0) {
    log.warn('WEIR_API_KEYS is not set: the API is open to anyone who can reach it');
  }
  if (settings.broker_url)
    log.warn('BROKER_URL is set, but the pipeline engine is not part of this build yet');

  const store = createConfigStore({
    repository: createConfigsRepository(database.db),
    registry,
    now: () => new Date(),
    newId: uuidv7,
  });
  for (const result of await syncPipelineFiles(settings.pipelines_dir, store)) {
    const report = result.config?.validation_report;
    const summary = report
      ? `${report.is_valid ? 'valid' : 'INVALID'}, ${report.error_count} errors, ${report.warning_count} warnings`
      : result.error;
    log[result.outcome === 'failed' ? 'warn' : 'info'](
      { file: result.file, config_id: result.config?.id },
      `pipeline file ${result.outcome}: ${summary}`,
    );
  }

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    log.info(`${signal}: shutting down`);
    await app.close();
    await database.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));

  const address = await app.listen({ host: settings.host, port: settings.port });
  log.info(
    `Weir is listening on ${address}: API under ${address}/api/v1, interactive docs at ${address}/docs`,
  );
}
