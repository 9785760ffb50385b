/**
 * Issue 35: `weir serve` listens before it loads the pipeline files. Health answers first;
 * readiness answers 503 naming the work under way, then 200; a config list asked for the
 * moment health answers already holds every pipeline file (it waited for the load), where
 * before the gate it would have listed those stored so far.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startWeirProcess, type WeirProcess } from './helpers/weir-process.js';

/** Enough files that loading them takes well over the few milliseconds between two requests. */
const FILES = 24;

describe('start-up readiness of weir serve', () => {
  let folder: string | undefined;
  let service: WeirProcess | undefined;
  afterAll(async () => {
    await service?.stop();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('answers health first, readiness 503 then 200, and pipeline routes only once the files are loaded', async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'weir-startup-'));
    const example = await readFile('examples/synthetic-load.yaml', 'utf8');
    for (let index = 0; index < FILES; index++) {
      const text = example.replace(/^name: .*$/m, `name: synthetic-${index}\nrun_on_load: false`);
      await writeFile(path.join(folder, `synthetic-${String(index).padStart(2, '0')}.yaml`), text);
    }
    service = await startWeirProcess({ WEIR_PIPELINES_DIR: folder }, { waitForStartup: false });
    const { base } = service;

    const starting = await fetch(`${base}/api/v1/system/ready`);
    expect(starting.status).toBe(503);
    expect(((await starting.json()) as { starting?: string[] }).starting).toEqual(['pipeline files']);

    const listed = await fetch(`${base}/api/v1/configs?limit=100`);
    expect(listed.status).toBe(200);
    const body = (await listed.json()) as { total: number; configs: { origin: string }[] };
    expect(body.total).toBe(FILES);
    expect(body.configs.every((config) => config.origin.startsWith('file:synthetic-'))).toBe(true);

    let ready: Response | undefined;
    for (let attempt = 0; attempt < 100 && ready?.status !== 200; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      ready = await fetch(`${base}/api/v1/system/ready`);
    }
    expect(ready?.status).toBe(200);
    expect(((await ready?.json()) as { starting?: string[] }).starting).toBeUndefined();
  }, 180_000);
});
