/**
 * `weir serve` with STORAGE_URL=s3://bucket/prefix against a real S3-compatible server
 * (s3rver on loopback): a file-share pipeline stores a PDF and converts it, the objects and
 * their sidecars land under the prefix in the bucket, and the storage API serves them back,
 * byte ranges included.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3Client } from '../src/storage/s3.js';
import { freePort } from './helpers/ports.js';
import { startS3Server, type TestS3Server } from './helpers/s3-server.js';

const weir = ['--import', 'tsx', path.resolve('src/main.ts')];

describe('weir serve on S3 storage', () => {
  let s3: TestS3Server;
  let child: ChildProcess | undefined;
  let folder: string;
  let output = '';
  let base: string;

  beforeAll(async () => {
    s3 = await startS3Server();
    folder = await mkdtemp(path.join(tmpdir(), 'weir-s3-serve-'));
    await mkdir(path.join(folder, 'share'));
    await copyFile(
      path.resolve('test/fixtures/site/files/guide.pdf'),
      path.join(folder, 'share', 'guide.pdf'),
    );
    const port = await freePort();
    base = `http://127.0.0.1:${port}/api/v1`;
    child = spawn(process.execPath, [...weir, 'serve'], {
      env: {
        ...process.env,
        DATABASE_URL: '',
        WEIR_DATA_DIR: path.join(folder, 'data'),
        WEIR_PIPELINES_DIR: path.join(folder, 'no-pipelines'),
        WEIR_FILESHARE_ROOTS: path.join(folder, 'share'),
        PORT: String(port),
        WEIR_LOG_LEVEL: 'warn',
        STORAGE_URL: `s3://${s3.bucket}/svc/objects`,
        WEIR_S3_ENDPOINT: s3.endpoint,
        WEIR_S3_ACCESS_KEY_ID: s3.accessKeyId,
        WEIR_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr?.on('data', (chunk) => {
      output += chunk;
    });
    for (let attempt = 0; attempt < 600; attempt++) {
      const health = await fetch(`${base}/system/health`).catch(() => undefined);
      if (health?.status === 200) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`weir serve did not become healthy: ${output}`);
  }, 150_000);

  afterAll(async () => {
    child?.kill('SIGKILL');
    await s3?.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('stores stage outputs with sidecars in the bucket and serves them back', async () => {
    const yaml = [
      'init_message:',
      `  payload: { root: ${JSON.stringify(path.join(folder, 'share'))} }`,
      'routes:',
      '  - id: share',
      '    adapters:',
      '      - type: fileshare_enumerator',
      `        config: { provider: local, root: ${JSON.stringify(path.join(folder, 'share'))}, extensions: [.pdf] }`,
      '      - type: fileshare_fetcher',
      '      - type: document_converter',
    ].join('\n');
    const created = await fetch(`${base}/configs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ config_yaml: yaml }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const config = (await created.json()) as { id: string };
    const run = await fetch(`${base}/configs/${config.id}/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    const execution = (await run.json()) as { execution_id?: string; id?: string };
    const executionId = (execution.execution_id ?? execution.id) as string;
    const waited = await fetch(`${base}/executions/${executionId}/wait`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ timeout_seconds: 30 }),
    });
    expect(waited.status, await waited.clone().text()).toBe(200);
    const lineage = (await (await fetch(`${base}/executions/${executionId}/lineage?limit=100`)).json()) as {
      messages: { stage: string; status: string; error: string | null }[];
    };
    expect(lineage.messages.filter((row) => row.status !== 'completed')).toEqual([]);

    // In the bucket: the fetched PDF and its sidecar, under the STORAGE_URL prefix.
    const client = createS3Client({
      endpoint: s3.endpoint,
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
    });
    const listed = await client.send(
      new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `svc/objects/${executionId}/` }),
    );
    const keys = (listed.Contents ?? []).map((object) => object.Key as string);
    const pdfKey = keys.find((key) => key.endsWith('/guide.pdf')) as string;
    expect(pdfKey).toMatch(
      new RegExp(`^svc/objects/${executionId}/fileshare_fetcher/[0-9a-f]{16}/guide\\.pdf$`),
    );
    expect(keys).toContain(`${pdfKey}.meta.json`);
    client.destroy();

    // Through the storage API: listed from the catalogue, content and a range from S3.
    const key = pdfKey.slice('svc/objects/'.length);
    const list = (await (await fetch(`${base}/storage/objects?prefix=${executionId}/`)).json()) as {
      objects: { key: string; size: number }[];
    };
    expect(list.objects.map((object) => object.key)).toEqual([key]);
    const content = await fetch(`${base}/storage/objects/${key}`);
    expect(content.status).toBe(200);
    const bytes = Buffer.from(await content.arrayBuffer());
    expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');
    expect(bytes.length).toBe(list.objects[0]?.size);
    const range = await fetch(`${base}/storage/objects/${key}`, { headers: { range: 'bytes=1-3' } });
    expect(range.status).toBe(206);
    expect(await range.text()).toBe('PDF');
  }, 60_000);
});
