/** `weir ask`, `weir search`, the --url default from PORT, a closed pipe, and the help. */
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { cli, cliWith, weirCommand } from './helpers/cli.js';
import { type DatabaseTarget, databaseTargets } from './helpers/databases.js';
import { seedKnowledgeFixture } from './helpers/knowledge-fixture.js';

describe.each(
  databaseTargets(),
)('weir ask and weir search against a service on %s', (target: DatabaseTarget) => {
  let test: TestApp;
  let url: string;
  let port: string;
  beforeAll(async () => {
    test = await createTestApp(target);
    await seedKnowledgeFixture(test.database);
    await test.app.listen({ port: 0, host: '127.0.0.1' });
    port = String((test.app.server.address() as AddressInfo).port);
    url = `http://127.0.0.1:${port}`;
  });
  afterAll(async () => {
    await test?.close();
  });

  it('prints ranked sources: rank, title, where, an excerpt', async () => {
    const result = await cli(
      'search',
      'dead tuples vacuum',
      '--mode',
      'keyword',
      '--limit',
      '3',
      '--url',
      url,
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^1\. Routine vacuuming.* \(score [\d.]+\)$/m);
    expect(result.stdout).toContain('   https://docs.example.org/vacuum');
    const json = await cli('search', 'dead tuples', '--mode', 'keyword', '--url', url, '--json');
    expect(JSON.parse(json.stdout)).toMatchObject({ search_type: 'keyword' });
  }, 120_000);

  it('prints the answer and the sources it cites', async () => {
    const result = await cli('ask', 'How do I run a pipeline?', '--url', url);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const [answer, sources] = result.stdout.split(/\nSources(?: \(not cited\))?:\n/);
    expect(answer?.trim().length).toBeGreaterThan(0);
    expect(sources).toMatch(/^ {2}\[1\] Pipelines.*\n {6}https:\/\/docs\.example\.org\/pipelines$/m);
  }, 120_000);

  it('takes --url from PORT when it is not given: ask, search and eval', async () => {
    const search = await cliWith({ PORT: port }, 'search', 'dead tuples', '--mode', 'keyword');
    expect(search.stderr).toBe('');
    expect(search.stdout).toContain('https://docs.example.org/vacuum');
    const ask = await cliWith({ PORT: port }, 'ask', 'dead tuples');
    expect(ask.code).toBe(0);
    const evaluation = await cliWith({ PORT: port }, 'eval', 'missing-questions.jsonl');
    expect(evaluation.stderr).toContain('cannot read missing-questions.jsonl');
    const questions = await cliWith({ PORT: '9' }, 'search', 'dead tuples');
    expect(questions.code).toBe(1);
    expect(questions.stderr).toContain('weir search: cannot reach http://127.0.0.1:9');
  }, 180_000);

  it('tells usage errors with 2 and API errors in one line with 1', async () => {
    const mode = await cli('search', 'x', '--mode', 'bm25', '--url', url);
    expect(mode.code).toBe(2);
    expect(mode.stderr).toContain('--mode takes keyword, vector, rrf');
    expect((await cli('search', 'x', '--limit', '0', '--url', url)).code).toBe(2);
    expect((await cli('ask', '--url', url)).code).toBe(2);
    const tooLong = await cli('search', 'vacuum '.repeat(300), '--mode', 'keyword', '--url', url);
    expect(tooLong.code).toBe(1);
    expect(tooLong.stderr).toMatch(/^weir search: POST \/chat\/search\/keyword answered 422/);
    expect(tooLong.stderr).not.toContain('    at ');
  }, 120_000);
});

/** Runs weir with its stdout closed before it writes: every write meets EPIPE. */
function withClosedStdout(...args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...weirCommand, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('weir and a reader that goes away', () => {
  it('ends quietly with status 0 on EPIPE (weir adapters | head)', async () => {
    const [adapters, help] = await Promise.all([withClosedStdout('adapters'), withClosedStdout('--help')]);
    expect(adapters).toEqual({ code: 0, stderr: '' });
    expect(help).toEqual({ code: 0, stderr: '' });
  }, 120_000);
});

describe('weir --help', () => {
  const commands = ['serve', 'run', 'ask', 'search', 'validate', 'adapters', 'eval', 'help'];

  it('lists every command with its options, also as weir help', async () => {
    const [flag, word] = await Promise.all([cli('--help'), cli('help')]);
    expect(flag.code).toBe(0);
    expect(word.stdout).toBe(flag.stdout);
    for (const command of commands) expect(flag.stdout).toMatch(new RegExp(`^ {2}weir ${command}\\b`, 'm'));
    expect(flag.stdout).toContain('weir run FILE [--url U]');
    expect(flag.stdout).toContain('weir search "QUERY" [--mode M] [--limit N] [--url U] [--json]');
    expect(flag.stdout).toContain('weir eval FILE [--modes M] [--chat] [--url U] [--json] [--limit N]');
  }, 60_000);

  it('shows one command with weir COMMAND --help and weir help COMMAND, the --url default from PORT', async () => {
    const [flag, word] = await Promise.all([
      cliWith({ PORT: '9123' }, 'search', '--help'),
      cliWith({ PORT: '9123' }, 'help', 'search'),
    ]);
    expect(flag.code).toBe(0);
    expect(word.stdout).toBe(flag.stdout);
    expect(flag.stdout).toContain('weir search "QUERY"');
    expect(flag.stdout).not.toContain('weir run');
    expect(flag.stdout).toContain('U = a running service (default http://127.0.0.1:9123)');
    const unknown = await cli('--frobnicate');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("Unknown option '--frobnicate'");
    expect(unknown.stderr).not.toContain('    at ');
  }, 60_000);
});
