/** `weir serve` in a child process on the embedded defaults, in a fresh data dir, on a free-ish port. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { weirCommand } from './cli.js';
import { freePort } from './ports.js';

export interface WeirProcess {
  /** http://127.0.0.1:<port> */
  base: string;
  child: ChildProcess;
  dataDir: string;
  /** Kills the process and removes its data dir (unless the caller named it). */
  stop(): Promise<void>;
}

export interface StartOptions {
  /** A data dir of the caller's, left in place by stop(). */
  dataDir?: string;
  /** After `serve`, e.g. `['--role', 'worker']`. */
  args?: string[];
  /** Node arguments that start the CLI: src/main.ts through tsx unless given (the built dist/main.js). */
  command?: string[];
  /**
   * Where readiness is asked: the API's health by default. A `--role worker` serves no API,
   * so it is started with WEIR_METRICS_PORT = PORT and asked for `/metrics`.
   */
  readyPath?: string;
  /**
   * Also wait until the start-up work that follows listening (the pipeline files) is done:
   * `starting` gone from /system/ready. Default true; a test of that window sets false.
   * Requests to pipeline routes wait for that work anyway, for at most 15 s; on the two
   * shared cores under load a first start's files could take longer.
   */
  waitForStartup?: boolean;
}

/**
 * Starts the service with `environment` over the embedded defaults; resolves once health
 * answers. In a fresh data dir that stop() removes, or in `options.dataDir` (left in place).
 */
export async function startWeirProcess(
  environment: Record<string, string> = {},
  options: StartOptions = {},
): Promise<WeirProcess> {
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(tmpdir(), 'weir-process-')));
  // A port another process took between freePort's check and the child's listen: try another.
  for (let start = 1; ; start++) {
    const started = await startOnce(environment, options, dataDir, await freePort());
    if (started !== 'port taken') return started;
    if (start === 3) throw new Error('weir serve found its port taken 3 times');
  }
}

async function startOnce(
  environment: Record<string, string>,
  options: StartOptions,
  dataDir: string,
  port: number,
): Promise<WeirProcess | 'port taken'> {
  const readyPath = options.readyPath ?? '/api/v1/system/health';
  const command = options.command ?? weirCommand;
  const child = spawn(process.execPath, [...command, 'serve', ...(options.args ?? [])], {
    env: {
      ...process.env,
      DATABASE_URL: '',
      WEIR_DATA_DIR: dataDir,
      PORT: String(port),
      ...(readyPath === '/metrics' ? { WEIR_METRICS_PORT: String(port) } : {}),
      WEIR_LOG_LEVEL: 'warn',
      ...environment,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // Passed through as it comes; the tail is kept to tell a taken port from other failures.
  let stderrTail = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    process.stderr.write(chunk);
    stderrTail = (stderrTail + chunk.toString('utf8')).slice(-4096);
  });
  const stop = async () => {
    child.kill('SIGKILL');
    if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
  };
  const base = `http://127.0.0.1:${port}`;
  // Generous, as in test/crash.test.ts: a cold start (tsx, PGlite's initdb) on the two shared
  // cores under load has taken over 80 s.
  for (let attempt = 0; attempt < 450; attempt++) {
    const health = await fetch(`${base}${readyPath}`).catch(() => undefined);
    if (health?.ok && (await startupDone(base, readyPath, options.waitForStartup ?? true)))
      return { base, child, dataDir, stop };
    if (child.exitCode !== null) break; // it gave up (its stderr is passed on): no use waiting
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  if (child.exitCode !== null && stderrTail.includes('EADDRINUSE')) {
    child.kill('SIGKILL');
    return 'port taken';
  }
  await stop();
  throw new Error(
    child.exitCode === null
      ? 'weir serve did not answer within 90 s'
      : `weir serve exited with code ${child.exitCode} before answering: ${stderrTail.slice(-1000)}`,
  );
}

/** Whether `weir serve` has finished the work it does after listening (api/startup-work.ts). */
async function startupDone(base: string, readyPath: string, wait: boolean): Promise<boolean> {
  if (!wait || readyPath !== '/api/v1/system/health') return true;
  const ready = await fetch(`${base}/api/v1/system/ready`).catch(() => undefined);
  if (!ready) return false;
  const body = (await ready.json().catch(() => ({}))) as { starting?: string[] };
  return body.starting === undefined;
}
