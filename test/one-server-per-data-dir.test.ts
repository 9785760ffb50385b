/**
 * One server per data dir (docs/security.md): a second `weir serve` on a data dir a live server
 * holds exits at once, non-zero, naming the dir, the holder's pid and its start time, and the
 * first goes on serving; after kill -9 of the holder a new server takes the stale lock over and
 * has the first one's data.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { weirCommand } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';
import { startWeirProcess, type WeirProcess } from './helpers/weir-process.js';

const pipeline = `name: kept across a takeover
routes:
  - id: load
    adapters:
      - type: synthetic_fanout
        config: { count: 3 }
        destination: sink
  - id: sink
    adapters:
      - type: synthetic_sink
`;

/** `weir serve` on `dataDir`, expected to end by itself; killed after `timeoutMs` if not. */
async function serveUntilExit(
  dataDir: string,
  timeoutMs: number,
): Promise<{ code: number | null; stderr: string; elapsedMs: number }> {
  const port = await freePort();
  const started = Date.now();
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [...weirCommand, 'serve'],
      {
        env: {
          ...process.env,
          DATABASE_URL: '',
          WEIR_DATA_DIR: dataDir,
          WEIR_PIPELINES_DIR: path.join(dataDir, 'no-pipelines'),
          PORT: String(port),
          WEIR_LOG_LEVEL: 'warn',
        },
        timeout: timeoutMs,
        killSignal: 'SIGKILL',
      },
      (_error, _stdout, stderr) => resolve({ code: child.exitCode, stderr, elapsedMs: Date.now() - started }),
    );
  });
}

describe('one server per data dir', () => {
  let root: string;
  let dataDir: string;
  const servers: WeirProcess[] = [];
  const environment = () => ({ WEIR_PIPELINES_DIR: path.join(root, 'no-pipelines') });
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'weir-one-server-'));
    dataDir = path.join(root, 'data');
  });
  afterAll(async () => {
    for (const server of servers) await server.stop();
    await rm(root, { recursive: true, force: true });
  });

  it('refuses a second server on a data dir in use, and the first goes on serving', async () => {
    const first = await startWeirProcess(environment(), { dataDir });
    servers.push(first);
    const second = await serveUntilExit(dataDir, 90_000);
    expect({ code: second.code, stderr: second.stderr.slice(0, 500) }).toMatchObject({ code: 1 });
    const lockName = (await readdir(dataDir)).find((name) => name.startsWith('weir.lock.')) as string;
    const lock = JSON.parse(await readFile(path.join(dataDir, lockName), 'utf8')) as { started_at: string };
    expect(second.stderr).toBe(
      `weir: data dir ${dataDir} is in use by pid ${first.child.pid} (started at ${lock.started_at})\n`,
    );
    // It stopped at the lock by itself (a tsx start under load alone can take 15 s).
    expect(second.elapsedMs).toBeLessThan(60_000);

    const created = await fetch(`${first.base}/api/v1/configs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ config_yaml: pipeline }),
    });
    expect(created.status).toBe(201);
  }, 240_000);

  it('takes over the lock of a server killed with SIGKILL, and has its data', async () => {
    const first = servers[0] as WeirProcess;
    const configs = (await (await fetch(`${first.base}/api/v1/configs`)).json()) as {
      configs: Array<{ id: string; name: string }>;
    };
    const config = configs.configs.find((candidate) => candidate.name === 'kept across a takeover');
    expect(config).toBeDefined();
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));

    const next = await startWeirProcess(environment(), { dataDir });
    servers.push(next);
    const found = await fetch(`${next.base}/api/v1/configs/${config?.id}`);
    expect(found.status).toBe(200);
    expect(((await found.json()) as { name: string }).name).toBe('kept across a takeover');
  }, 240_000);
});
