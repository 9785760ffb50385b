import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, cliWith, weirCommand } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';

describe('weir validate', () => {
  it('passes every example pipeline (the connector ones with their secrets set)', async () => {
    const files = [
      ...(await readdir('examples'))
        .filter((name) => name.endsWith('.yaml'))
        .map((name) => `examples/${name}`),
      ...(await readdir('examples/connectors')).map((name) => `examples/connectors/${name}`),
    ];
    expect(files.length).toBeGreaterThanOrEqual(5);
    const result = await cliWith(
      {
        WEIR_SECRET_CONFLUENCE: 'token',
        WEIR_SECRET_CONFLUENCE_ORIGINS: 'https://your-site.atlassian.net',
        WEIR_SECRET_GRAPH: 'secret',
        WEIR_SECRET_GRAPH_ORIGINS: 'https://login.microsoftonline.com,https://graph.microsoft.com',
        WEIR_FILESHARE_ROOTS: '/srv/chat-exports',
      },
      'validate',
      ...files,
    );
    expect(result.code).toBe(0);
    expect(result.stdout.match(/valid \(0 errors, 0 warnings\)/g)).toHaveLength(files.length);
  });

  it('reports a connector example whose secret is not set as E214', async () => {
    const result = await cli('validate', 'examples/connectors/sharepoint-site.yaml');
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('E214 error');
    expect(result.stdout).toContain('Set WEIR_SECRET_GRAPH');
  });

  it('reports a connector example whose secret declares no origins as E215, naming the setting to add', async () => {
    const result = await cliWith(
      { WEIR_SECRET_GRAPH: 'secret' },
      'validate',
      'examples/connectors/sharepoint-site.yaml',
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('E215 error');
    expect(result.stdout).toContain(
      'secret graph has no declared origins, so it is not sent to https://login.microsoftonline.com',
    );
    expect(result.stdout).toContain(
      'Set WEIR_SECRET_GRAPH_ORIGINS=https://login.microsoftonline.com,https://graph.microsoft.com',
    );
  });

  it('exits 1 and prints each finding with line and remediation', async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'weir-cli-'));
    const file = path.join(folder, 'bad.yaml');
    await writeFile(file, 'routes:\n  - id: a\n    adapters: [{ type: metadata_extractor }]\n');
    const result = await cli('validate', file);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`E205 error ${file}:3:`);
    expect(result.stdout).toContain('Use "type: html_to_markdown" instead.');
    await rm(folder, { recursive: true, force: true });
  });

  it('checks step configs against the environment settings: a share root outside them is E211', async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'weir-cli-'));
    const file = path.join(folder, 'share.yaml');
    await writeFile(
      file,
      'routes:\n  - id: a\n    adapters:\n      - type: fileshare_enumerator\n        config: { root: /etc }\n',
    );
    const result = await cli('validate', file);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`E211 error ${file}:5:`);
    expect(result.stdout).toContain(
      'share root /etc is outside the allowed roots (./examples, ./docs, ./README.md)',
    );
    await rm(folder, { recursive: true, force: true });
  });

  it('says in one line that a file cannot be read, and exits 2', async () => {
    const result = await cli('validate', 'missing.yaml');
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('weir validate: cannot read missing.yaml: no such file\n');
  });

  it('exits 2 on an unknown command or role', async () => {
    expect((await cli('frobnicate')).code).toBe(2);
    const role = await cli('serve', '--role', 'boss');
    expect(role.code).toBe(2);
    expect(role.stderr).toContain('--role must be all, api or worker');
  });
});

describe('weir serve', () => {
  let child: ChildProcess | undefined;
  let dataDir: string | undefined;
  afterAll(async () => {
    child?.kill('SIGKILL');
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('says in one line, and exits 1, when its port is taken', async () => {
    const holder = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    const folder = await mkdtemp(path.join(tmpdir(), 'weir-port-taken-'));
    try {
      const result = await cliWith(
        {
          DATABASE_URL: '',
          WEIR_DATA_DIR: folder,
          WEIR_PIPELINES_DIR: path.join(folder, 'none'),
          PORT: String(port),
          WEIR_LOG_LEVEL: 'warn',
        },
        'serve',
      );
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `weir: cannot listen on 127.0.0.1:${port}: the port is in use by another program (or another Weir) (EADDRINUSE); set PORT, or WEIR_METRICS_PORT for the metrics port, to another\n`,
      );
    } finally {
      holder.close();
      await rm(folder, { recursive: true, force: true });
    }
  }, 120_000);

  it('starts on the embedded defaults, loads the examples, answers, and stops on SIGTERM', async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'weir-serve-'));
    const port = await freePort();
    child = spawn(process.execPath, [...weirCommand, 'serve'], {
      env: {
        ...process.env,
        DATABASE_URL: '',
        WEIR_DATA_DIR: dataDir,
        PORT: String(port),
        WEIR_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (chunk) => {
      output += chunk;
    });
    const base = `http://127.0.0.1:${port}/api/v1`;
    let health: Response | undefined;
    for (let attempt = 0; attempt < 300 && !health; attempt++) {
      health = await fetch(`${base}/system/health`).catch(() => undefined);
      if (!health) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(health?.status).toBe(200);
    expect(output).toContain('WEIR_API_KEYS is not set');
    const configs = (await (await fetch(`${base}/configs`)).json()) as {
      configs: Array<{ id: string; origin: string; is_runnable: boolean }>;
    };
    const origins = configs.configs.map((config) => config.origin).sort();
    expect(origins).toEqual([
      'file:knowledge-base.yaml',
      'file:public-website.yaml',
      'file:synthetic-load.yaml',
      'file:weir-docs.yaml',
    ]);
    // Every example that runs offline ran once on start; those with run_on_load: false did not.
    const executions = (await (await fetch(`${base}/executions`)).json()) as {
      executions: Array<{ id: string; config_id: string }>;
    };
    const originOf = (configId: string) => configs.configs.find((config) => config.id === configId)?.origin;
    expect(executions.executions.map((execution) => originOf(execution.config_id)).sort()).toEqual([
      'file:synthetic-load.yaml',
      'file:weir-docs.yaml',
    ]);
    for (const execution of executions.executions) {
      const waited = (await (
        await fetch(`${base}/executions/${execution.id}/wait`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ timeout_seconds: 90 }),
        })
      ).json()) as { status: string; statistics: { total_messages: number; completed_messages: number } };
      expect(waited.status).toBe('completed');
      expect(waited.statistics.completed_messages).toBe(waited.statistics.total_messages);
      if (originOf(execution.config_id) === 'file:synthetic-load.yaml') {
        expect(waited.statistics.completed_messages).toBe(1001);
      }
    }
    // The front door's promise: chat answers from the indexed docs, with citations, offline.
    const chat = await fetch(`${base}/chat/complete`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'How do I run Weir on a PostgreSQL server with a STOMP broker?' }),
    });
    expect(chat.status).toBe(200);
    const answer = (await chat.json()) as {
      answer: string;
      sources: Array<{
        citation: number;
        cited: boolean;
        source: { url: string | null; object_key: string | null; heading_path: string[] };
      }>;
    };
    // The first source is a page that answers it: where the deployments, the roles or the brokers
    // are described.
    const first = answer.sources[0]?.source;
    expect(`${first?.url ?? first?.object_key} ${first?.heading_path.join(' > ')}`).toMatch(
      /(docs\/(architecture\.md .*deployments|engine\.md .*Brokers|deploy\.md)|README\.md .*(scale|PostgreSQL))/,
    );
    // The answer quotes README.md's scale-out commands, cited with a source of the response.
    expect(answer.answer).toContain('--role worker');
    const cited = Number(/\[(\d+)\]/.exec(answer.answer)?.[1]);
    expect(answer.sources.find((source) => source.citation === cited)?.cited).toBe(true);
    expect(answer.sources.length).toBeGreaterThan(0);
    expect(answer.sources.some((source) => source.cited)).toBe(true);

    // The knowledge-base example compiles the stored docs into cited concept pages, offline.
    const knowledgeBase = configs.configs.find((config) => config.origin === 'file:knowledge-base.yaml');
    const run = (await (
      await fetch(`${base}/configs/${knowledgeBase?.id}/run`, { method: 'POST' })
    ).json()) as {
      id: string;
    };
    const compiled = (await (
      await fetch(`${base}/executions/${run.id}/wait`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ timeout_seconds: 90 }),
      })
    ).json()) as { status: string };
    expect(compiled.status).toBe('completed');
    const listed = (await (
      await fetch(`${base}/storage/objects?prefix=${run.id}/scribe_diff_writer/pages/&limit=1000`)
    ).json()) as { objects: Array<{ key: string }> };
    expect(listed.objects.length).toBeGreaterThan(10);
    const pageKey = listed.objects[0]?.key as string;
    const pageText = await (await fetch(`${base}/storage/objects/${pageKey}`)).text();
    expect(pageText).toMatch(/^# .+\n/);
    expect(pageText).toMatch(/\[1\]/);
    expect(pageText).toContain('## Sources');
    const exited = new Promise<number | null>((resolve) => child?.once('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 180_000);
});
