/** `weir serve` in a child process on the embedded defaults, in a fresh data dir, on a free-ish port. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { weirCommand } from './cli.js';

export interface WeirProcess {
  /** http://127.0.0.1:<port> */
  base: string;
  child: ChildProcess;
  dataDir: string;
  /** Kills the process and removes its data dir. */
  stop(): Promise<void>;
}

/** Starts the service with `environment` over the embedded defaults; resolves once health answers. */
export async function startWeirProcess(environment: Record<string, string> = {}): Promise<WeirProcess> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'weir-process-'));
  const port = 20000 + Math.floor(Math.random() * 20000);
  const child = spawn(process.execPath, [...weirCommand, 'serve'], {
    env: {
      ...process.env,
      DATABASE_URL: '',
      WEIR_DATA_DIR: dataDir,
      PORT: String(port),
      WEIR_LOG_LEVEL: 'warn',
      ...environment,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const stop = async () => {
    child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  };
  const base = `http://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 300; attempt++) {
    const health = await fetch(`${base}/api/v1/system/health`).catch(() => undefined);
    if (health?.ok) return { base, child, dataDir, stop };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await stop();
  throw new Error('weir serve did not answer within 60 s');
}
