/**
 * Crash test: a service running an execution on PGlite is killed with SIGKILL mid-run,
 * restarted on the same data dir, and the execution completes with every message processed
 * once in lineage, and one stage output object (and catalogue row) per message, none twice.
 * On the in-process broker the outbox republishes what the crash lost; on RabbitMQ (STOMP) the
 * unacknowledged messages come back from the broker and the republished ones are duplicates
 * that the engine must skip.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { brokerTargets, stompUrl } from './helpers/brokers.js';
import { freePort } from './helpers/ports.js';

const weir = ['--import', 'tsx', path.resolve('src/main.ts'), 'serve'];
const COUNT = 1500;

const pipeline = `
name: crash-test
routes:
  - id: generate
    adapters:
      - type: synthetic_fanout
        config: { count: ${COUNT} }
        destination: sink
  - id: sink
    adapters:
      - type: synthetic_sink
        config: { work_ms: 4, write_objects: true }
        concurrency: 4
`;

interface Statistics {
  total_messages: number;
  completed_messages: number;
  failed_messages: number;
  processing_messages: number;
}

const brokerUrls = (await brokerTargets()).map((target) => ({
  name: target.name === 'stomp' ? 'PGlite + RabbitMQ over STOMP' : 'embedded: PGlite + in-process broker',
  brokerUrl: target.name === 'stomp' ? stompUrl : '',
}));

describe.each(brokerUrls)('crash recovery ($name)', ({ brokerUrl }) => {
  const children: ChildProcess[] = [];
  let dataDir: string | undefined;
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  async function startService(port: number): Promise<string> {
    const child = spawn(process.execPath, weir, {
      env: {
        ...process.env,
        DATABASE_URL: '',
        BROKER_URL: brokerUrl,
        WEIR_DATA_DIR: path.join(dataDir as string, 'data'),
        WEIR_PIPELINES_DIR: path.join(dataDir as string, 'pipelines'),
        PORT: String(port),
        WEIR_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(child);
    // The last few KB of stderr, so a start that fails says why in the assertion.
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    let exited: string | undefined;
    child.once('exit', (code, signal) => {
      exited = `exited with ${code ?? signal}`;
    });
    const base = `http://127.0.0.1:${port}/api/v1`;
    // Generous: a start is TypeScript through tsx, PGlite's WebAssembly and the migrations, a
    // few seconds of CPU; on the two shared cores at load 20 one took over 90 s.
    for (let attempt = 0; attempt < 900; attempt++) {
      const health = await fetch(`${base}/system/health`).catch(() => undefined);
      if (health?.ok) return base;
      if (exited) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`service did not start (${exited ?? 'still running'}); stderr:\n${stderr}`);
  }

  async function statistics(base: string, id: string): Promise<Statistics> {
    const response = await fetch(`${base}/executions/${id}/wait`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ timeout_seconds: 1 }),
    });
    return ((await response.json()) as { statistics: Statistics }).statistics;
  }

  it('completes the execution after SIGKILL and restart, every message processed once', async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'weir-crash-'));
    await mkdir(path.join(dataDir, 'pipelines'));
    await writeFile(path.join(dataDir, 'pipelines', 'crash.yaml'), pipeline);
    const port = await freePort();

    let base = await startService(port);
    const listed = (await (await fetch(`${base}/executions`)).json()) as {
      executions: Array<{ id: string }>;
    };
    const id = listed.executions[0]?.id as string;
    expect(id).toBeDefined();

    // Let it get part of the way, then kill it without warning.
    let before: Statistics;
    for (;;) {
      before = await statistics(base, id);
      if (before.completed_messages > 100) break;
    }
    expect(before.completed_messages).toBeLessThan(COUNT + 1);
    children[0]?.kill('SIGKILL');
    await new Promise((resolve) => children[0]?.once('exit', resolve));

    base = await startService(port + 1);
    const response = await fetch(`${base}/executions/${id}/wait`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ timeout_seconds: 120 }),
    });
    const waited = (await response.json()) as { status: string; statistics: Statistics };
    expect(waited.status).toBe('completed');
    expect(waited.statistics).toMatchObject({
      total_messages: COUNT + 1,
      completed_messages: COUNT + 1,
      failed_messages: 0,
      processing_messages: 0,
    });
    // One object per sink message in the catalogue, whatever was processed twice around the crash.
    const keys = new Set<string>();
    for (let offset = 0; ; offset += 1000) {
      const page = (await (
        await fetch(`${base}/storage/objects?prefix=${id}/synthetic_sink/&limit=1000&offset=${offset}`)
      ).json()) as { objects: Array<{ key: string }>; total: number };
      expect(page.total).toBe(COUNT);
      for (const object of page.objects) keys.add(object.key);
      if (offset + 1000 >= page.total) break;
    }
    expect(keys.size).toBe(COUNT);
    // The pipeline file was unchanged, so the restart did not start a second execution.
    const after = (await (await fetch(`${base}/executions`)).json()) as { total: number };
    expect(after.total).toBe(1);
  }, 420_000);
});
