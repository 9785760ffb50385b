/**
 * `weir run FILE [--url U]`: runs a pipeline file to its end and exits with its outcome: 0
 * succeeded, 1 partial, failed or empty, 2 for a config with errors (its findings printed as
 * `weir validate` prints them). Embedded by default: the engine starts in this process on
 * the settings of the environment (the data dir's lock applies); with --url it runs on that
 * service. Both go through the same API calls (client.ts).
 */
import { createHash } from 'node:crypto';
import { DataDirInUseError } from '../db/data-dir-lock.js';
import type { ValidationReport } from '../engine/config/validate-config.js';
import { openService } from '../serve.js';
import { type ApiCall, expectOk, httpCall, injectCall, unreachable } from './client.js';
import { type Outcome, outcomeExitCode, runOutcome } from './outcome.js';
import { type Progress, progressFor, type StageCounts } from './progress.js';
import { formatReport, readPipelineFile } from './validate-command.js';

export interface RunCommandOptions {
  url?: string | undefined;
  /** The URL a user would pass to reach a server on this environment's port. */
  suggestedUrl: string;
}

interface Execution {
  id: string;
  status: string;
  error: string | null;
  outcome?: unknown;
}

interface Statistics {
  completed_messages: number;
  failed_messages: number;
  skipped_messages: number;
  total_messages: number;
  first_errors: { route_id: string; stage: string; error: string | null }[];
}

interface ConfigSummary {
  id: string;
  config_hash: string;
  origin: string;
}

const WAIT_SECONDS = 1;

export async function runCommand(
  files: string[],
  options: RunCommandOptions,
  environment: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  if (files.length !== 1) {
    process.stderr.write('weir run: name one pipeline file (YAML)\n');
    return 2;
  }
  const file = files[0] as string;
  const yaml = await readPipelineFile('run', file);
  if (yaml === undefined) return 2;
  if (options.url) {
    try {
      return await runPipeline(httpCall(options.url, environment.WEIR_API_KEY), file, yaml, () => {
        process.stderr.write('weir run: the execution goes on in the service; cancel it there\n');
      });
    } catch (error) {
      const told = unreachable(options.url, error);
      if (told) process.stderr.write(`weir run: ${told}\n`);
      else throw error;
      return 1;
    }
  }
  return runEmbedded(file, yaml, options, environment);
}

async function runEmbedded(
  file: string,
  yaml: string,
  options: RunCommandOptions,
  environment: NodeJS.ProcessEnv,
): Promise<number> {
  let service: Awaited<ReturnType<typeof openService>>;
  try {
    // The service logs to stdout; under the progress only errors (unless WEIR_LOG_LEVEL says).
    service = await openService(environment, 'all', {
      logLevel: environment.WEIR_LOG_LEVEL ? undefined : 'error',
    });
  } catch (error) {
    if (!(error instanceof DataDirInUseError)) throw error;
    process.stderr.write(
      `weir run: ${error.message}\n` +
        `A server holds this data dir: run the file on it with --url ${options.suggestedUrl}\n`,
    );
    return 1;
  }
  try {
    return await runPipeline(injectCall(service.app), file, yaml, () => {
      process.stderr.write(
        'weir run: stopped; the execution resumes when Weir next starts on this data dir\n',
      );
    });
  } finally {
    await service.close();
  }
}

/** Validates, stores (or finds) the config, runs it and follows it to its end. */
async function runPipeline(call: ApiCall, file: string, yaml: string, onInterrupt: () => void) {
  const report = await expectOk<ValidationReport>(call, 'POST', '/configs/validate', { config_yaml: yaml });
  if (!report.is_valid) {
    process.stdout.write(formatReport(file, report));
    return 2;
  }
  if (report.warning_count > 0) process.stdout.write(formatReport(file, report));
  const configId = await storedConfigId(call, yaml);
  const execution = await expectOk<Execution>(call, 'POST', `/configs/${configId}/run`);
  process.stdout.write(`weir run: ${file} as config ${configId}, execution ${execution.id}\n`);

  let interrupted = false;
  const interrupt = () => {
    interrupted = true;
  };
  process.once('SIGINT', interrupt);
  try {
    const started = Date.now();
    const progress = progressFor(process.stdout);
    let waited: { completed: boolean; statistics?: Statistics } = { completed: false };
    while (!waited.completed && !interrupted) {
      waited = await expectOk(call, 'POST', `/executions/${execution.id}/wait`, {
        timeout_seconds: WAIT_SECONDS,
      });
      await drawStages(call, execution.id, progress, waited.completed);
    }
    if (interrupted || !waited.statistics) {
      onInterrupt();
      return 130;
    }
    return await reportEnd(call, execution.id, waited.statistics, Date.now() - started);
  } finally {
    process.removeListener('SIGINT', interrupt);
  }
}

async function drawStages(call: ApiCall, executionId: string, progress: Progress, final: boolean) {
  const { stages } = await expectOk<{ stages: StageCounts[] }>(
    call,
    'GET',
    `/executions/${executionId}/stages`,
  );
  progress.update(stages, final);
}

/**
 * The config already stored with this exact YAML (by its hash), so running one file again and
 * again does not pile up identical configs; otherwise a new one, stored from the YAML itself.
 */
async function storedConfigId(call: ApiCall, yaml: string): Promise<string> {
  const hash = createHash('sha256').update(yaml).digest('hex');
  const limit = 100;
  for (let offset = 0; ; offset += limit) {
    const page = await expectOk<{ configs: ConfigSummary[]; total: number }>(
      call,
      'GET',
      `/configs?limit=${limit}&offset=${offset}`,
    );
    const same = page.configs.find((config) => config.config_hash === hash && config.origin === 'api');
    if (same) return same.id;
    if (offset + limit >= page.total || page.configs.length === 0) break;
  }
  const created = await expectOk<{ id: string }>(call, 'POST', '/configs', yaml);
  return created.id;
}

/** The outcome line and the first errors; the exit code of the outcome. */
async function reportEnd(
  call: ApiCall,
  executionId: string,
  statistics: Statistics,
  elapsedMs: number,
): Promise<number> {
  const execution = await expectOk<Execution>(call, 'GET', `/executions/${executionId}`);
  const outcome: Outcome = runOutcome(execution, statistics);
  process.stdout.write(
    `${outcome}: execution ${execution.status} in ${(elapsedMs / 1000).toFixed(1)}s, ` +
      `${statistics.total_messages} messages: ${statistics.completed_messages} completed, ` +
      `${statistics.failed_messages} failed, ${statistics.skipped_messages} skipped\n`,
  );
  if (execution.error) process.stdout.write(`  error: ${execution.error}\n`);
  for (const failure of statistics.first_errors) {
    process.stdout.write(`  ${failure.route_id}/${failure.stage}: ${failure.error ?? 'failed'}\n`);
  }
  return outcomeExitCode(outcome);
}
