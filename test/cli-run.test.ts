/**
 * `weir run FILE`: embedded in a temp data dir, and against a running service with --url.
 * Each case starts the CLI (tsx) and, embedded, the engine on PGlite: minutes on a loaded
 * two-core machine, hence the timeouts.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliWith } from './helpers/cli.js';
import { startWeirProcess, type WeirProcess } from './helpers/weir-process.js';

/** A fan-out of `count` messages to a sink that fails every `failEvery`-th one (0: none). */
function pipeline(count: number, failEvery: number): string {
  return `name: cli-run-${count}-${failEvery}
init_message:
  route: generate
  payload: {}
routes:
  - id: generate
    adapters:
      - type: synthetic_fanout
        name: fanout
        config: { count: ${count}, payload_bytes: 16 }
        destination: sink
  - id: sink
    adapters:
      - type: synthetic_sink
        config: { work_ms: 0, fail_every: ${failEvery}, failure: permanent }
`;
}

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'weir-cli-run-'));
});
afterAll(async () => {
  if (folder) await rm(folder, { recursive: true, force: true });
});

describe('weir run, embedded', () => {
  it('runs a pipeline file to its end in its own data dir: plain progress lines, exit 0', async () => {
    const dataDir = path.join(folder, 'embedded');
    const result = await cliWith(
      { DATABASE_URL: '', WEIR_DATA_DIR: dataDir },
      'run',
      'examples/synthetic-load.yaml',
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    // Not a terminal: one plain line per stage that changed, no ANSI redraw.
    expect(result.stdout).not.toContain('\x1b[');
    expect(result.stdout).toMatch(
      /^weir run: examples\/synthetic-load\.yaml as config [0-9a-f-]{36}, execution [0-9a-f-]{36}$/m,
    );
    expect(result.stdout).toMatch(/^\[\d+\.\ds\] generate\/fanout 1\/1$/m);
    expect(result.stdout).toMatch(/^\[\d+\.\ds\] sink\/synthetic_sink 1000\/1000$/m);
    expect(result.stdout).toMatch(
      /^succeeded: execution completed in [\d.]+s, 1001 messages: 1001 completed, 0 failed, 0 skipped$/m,
    );
  }, 300_000);

  it('exits 1 for a run where messages failed, naming the first errors', async () => {
    const file = path.join(folder, 'failing.yaml');
    await writeFile(file, pipeline(6, 2));
    const result = await cliWith(
      { DATABASE_URL: '', WEIR_DATA_DIR: path.join(folder, 'embedded') },
      'run',
      file,
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^\[\d+\.\ds\] sink\/synthetic_sink 6\/6 \(3 failed\)$/m);
    expect(result.stdout).toMatch(
      /^partial: execution completed in [\d.]+s, 7 messages: 4 completed, 3 failed/m,
    );
    expect(result.stdout).toContain('  sink/synthetic_sink: synthetic failure of message 0');
  }, 300_000);

  it('exits 2 for a file that does not exist', async () => {
    const result = await cliWith({}, 'run', path.join(folder, 'missing.yaml'));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('cannot read');
  }, 60_000);
});

describe('weir run, with a service on the data dir', () => {
  let service: WeirProcess;
  beforeAll(async () => {
    service = await startWeirProcess();
  }, 120_000);
  afterAll(async () => {
    await service?.stop();
  });

  it('exits 2 for an invalid config and prints its findings as weir validate does', async () => {
    const file = path.join(folder, 'invalid.yaml');
    await writeFile(file, 'routes:\n  - id: a\n    adapters: [{ type: metadata_extractor }]\n');
    const result = await cliWith({}, 'run', file, '--url', service.base);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain(`${file}: INVALID (1 errors, 0 warnings)`);
    expect(result.stdout).toContain(`E205 error ${file}:3:`);
    expect(result.stdout).toContain('Use "type: html_to_markdown" instead.');
  }, 120_000);

  it('says a server holds the data dir and suggests --url, from PORT', async () => {
    const port = new URL(service.base).port;
    const result = await cliWith(
      { DATABASE_URL: '', WEIR_DATA_DIR: service.dataDir, PORT: port },
      'run',
      'examples/synthetic-load.yaml',
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`data dir ${service.dataDir} is in use by pid ${service.child.pid}`);
    expect(result.stderr).toContain(`run the file on it with --url http://127.0.0.1:${port}`);
  }, 120_000);

  it('runs the file on the service with --url, twice on one stored config', async () => {
    const file = path.join(folder, 'small.yaml');
    await writeFile(file, pipeline(5, 0));
    const first = await cliWith({}, 'run', file, '--url', service.base);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^\[\d+\.\ds\] sink\/synthetic_sink 5\/5$/m);
    expect(first.stdout).toMatch(/^succeeded: execution completed in [\d.]+s, 6 messages: 6 completed/m);
    const second = await cliWith({}, 'run', file, '--url', service.base);
    expect(second.code).toBe(0);
    const configOf = (stdout: string) => stdout.match(/as config ([0-9a-f-]{36})/)?.[1];
    expect(configOf(second.stdout)).toBeDefined();
    expect(configOf(second.stdout)).toBe(configOf(first.stdout));
  }, 180_000);
});
