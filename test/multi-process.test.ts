/**
 * Two `weir serve` processes on one PostgreSQL database and one RabbitMQ (the scale-out
 * setup, spec'd by DESIGN.md): an execution run through one is processed by both and
 * completes once, and the other instance's API waits for it. Needs the server and the STOMP
 * listener (CI has both); without them it is skipped, and says why.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokerTargets, stompUrl } from './helpers/brokers.js';
import { weirCommand } from './helpers/cli.js';
import { databaseTargets, type TestDatabase } from './helpers/databases.js';
import { freePort } from './helpers/ports.js';
import { skipBecause } from './helpers/skip.js';

const server = databaseTargets().find((target) => target.name === 'postgres');
const stomp = (await brokerTargets()).some((target) => target.name === 'stomp');
const skipReason = !server
  ? 'DATABASE_URL is not set (a PostgreSQL server is needed)'
  : !stomp
    ? 'the RabbitMQ STOMP listener does not answer (WEIR_TEST_STOMP_URL)'
    : undefined;

const COUNT = 400;
// 400 messages at 20 ms, two at a time, keep one process busy for about 4 s: several of the
// other process's 1 s polls, so it has joined the route before the queue runs dry. At 5 ms and
// four at a time (0.5 s) the first process could finish alone under CI's load (stop 39).
const pipeline = `
name: two-processes
routes:
  - id: generate
    adapters:
      - type: synthetic_fanout
        config: { count: ${COUNT} }
        destination: sink
  - id: sink
    adapters:
      - type: synthetic_sink
        config: { work_ms: 20 }
        concurrency: 2
`;

describe.skipIf(skipBecause(skipReason, 'test/multi-process.test.ts'))(
  'two service processes on PostgreSQL and RabbitMQ',
  () => {
    const children: ChildProcess[] = [];
    let database: TestDatabase;
    let dataDir: string;
    const bases: string[] = [];

    async function startService(name: string, port: number): Promise<string> {
      const child = spawn(process.execPath, [...weirCommand, 'serve'], {
        env: {
          ...process.env,
          DATABASE_URL: database.url,
          BROKER_URL: stompUrl,
          WEIR_DATA_DIR: path.join(dataDir, name),
          WEIR_PIPELINES_DIR: path.join(dataDir, 'no-pipelines'),
          PORT: String(port),
          WEIR_LOG_LEVEL: 'warn',
        },
        stdio: 'ignore',
      });
      children.push(child);
      const base = `http://127.0.0.1:${port}/api/v1`;
      for (let attempt = 0; attempt < 450; attempt++) {
        const health = await fetch(`${base}/system/health`).catch(() => undefined);
        if (health?.ok) return base;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      throw new Error(`service ${name} did not start`);
    }

    beforeAll(async () => {
      database = await (server as NonNullable<typeof server>).open();
      dataDir = await mkdtemp(path.join(tmpdir(), 'weir-two-processes-'));
      const ports = [await freePort(), await freePort()] as const;
      bases.push(...(await Promise.all([startService('a', ports[0]), startService('b', ports[1])])));
    }, 180_000);

    afterAll(async () => {
      for (const child of children) child.kill('SIGTERM');
      await Promise.all(
        children.map((child) =>
          child.exitCode === null ? new Promise((resolve) => child.once('exit', resolve)) : null,
        ),
      );
      await database?.close();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    });

    const post = async (url: string, body: unknown) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });

    it('runs an execution through one process, both process it, and the other waits for it', async () => {
      const [first, second] = bases as [string, string];
      const config = (await (await post(`${first}/configs`, { config_yaml: pipeline })).json()) as {
        id: string;
      };
      const run = await post(`${first}/configs/${config.id}/run`, {});
      expect(run.status).toBe(201);
      const { id } = (await run.json()) as { id: string };
      const waited = (await (
        await post(`${second}/executions/${id}/wait`, { timeout_seconds: 120 })
      ).json()) as {
        status: string;
        statistics: Record<string, number>;
      };
      expect(waited.status).toBe('completed');
      expect(waited.statistics).toMatchObject({
        total_messages: COUNT + 1,
        completed_messages: COUNT + 1,
        failed_messages: 0,
      });
      // Each process took a share of the messages from the broker.
      for (const base of bases) {
        const metrics = (await (await fetch(`${base}/system/metrics`)).json()) as {
          messages_completed: number;
        };
        expect(metrics.messages_completed).toBeGreaterThan(0);
      }
    });
  },
);
