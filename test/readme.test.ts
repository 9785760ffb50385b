/**
 * The README is the front door: its commands must work as written. Checked here: every file a
 * command names ships; every API path it calls is a route of the app (a path that does not
 * exist answers 404 "no endpoint"); it needs no tool it does not list (jq); the webhook example
 * targets the receiver that ships, which answers a signed POST with 2xx; and npm reads .npmrc
 * without a warning.
 */
import { execFile, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { type DatabaseTarget, databaseTargets } from './helpers/databases.js';
import { freePort } from './helpers/ports.js';

const readme = readFileSync('README.md', 'utf8');
/** The shell blocks of the README, joined, with backslash-continued lines joined too. */
const commands = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)]
  .map((match) => match[1] as string)
  .join('\n')
  .replace(/\\\n\s*/g, ' ');

describe('README commands', () => {
  let test: TestApp;
  beforeAll(async () => {
    test = await createTestApp(databaseTargets()[0] as DatabaseTarget);
  });
  afterAll(async () => {
    await test?.close();
  });

  it('name only files that ship', () => {
    const named = [...commands.matchAll(/(?:^|[\s@])((?:examples|scripts|docs)\/[\w./-]+\.\w+)/gm)].map(
      (match) => match[1] as string,
    );
    expect(named).toContain('examples/questions/weir-docs.jsonl');
    expect(named.filter((file) => !existsSync(file))).toEqual([]);
    // The file `weir eval` is given is one of them.
    const evaluated = [...commands.matchAll(/npx weir eval (\S+)/g)].map((match) => match[1] as string);
    expect(evaluated.length).toBeGreaterThan(0);
    expect(evaluated.filter((file) => !existsSync(file))).toEqual([]);
  });

  it('call only API paths that exist, the health path among them', async () => {
    const calls = [...commands.matchAll(/curl ([^\n]*?)http:\/\/127\.0\.0\.1:8080(\/[^\s'"]*)/g)].map(
      (match) => ({
        // The whole command line (the body flags come after the URL) says whether it POSTs.
        method: /-X POST|-d |--data-binary/.test(commands.slice(match.index).split('\n')[0] ?? '')
          ? 'POST'
          : 'GET',
        // A shell variable ($KB) or <placeholder> stands for an id.
        url: (match[2] as string).replace(/\$\w+|<\w+>/g, '01a21662-2d26-7385-ab78-6d0df10aa10c'),
      }),
    );
    const prose = [
      ...readme.replace(/```[\s\S]*?```/g, '').matchAll(/http:\/\/127\.0\.0\.1:8080(\/api\/v1\/[\w/-]+)/g),
    ].map((match) => ({
      method: 'GET',
      url: match[1] as string,
    }));
    expect(prose.map((call) => call.url)).toContain('/api/v1/system/health');
    const missing: string[] = [];
    for (const call of [...calls, ...prose]) {
      if (call.url.endsWith('/run')) continue; // exists (configs-api.test.ts); would start a run here
      const response = await test.app.inject({
        method: call.method as 'GET' | 'POST',
        url: call.url,
        ...(call.method === 'POST' ? { payload: {} } : {}),
      });
      if (response.statusCode === 404 && String(response.json().detail).startsWith('no endpoint')) {
        missing.push(`${call.method} ${call.url}`);
      }
    }
    expect(calls.length).toBeGreaterThan(10);
    expect(missing).toEqual([]);
    const health = await test.app.inject({ url: '/api/v1/system/health' });
    expect(health.statusCode).toBe(200);
  });

  it('need no tool the README does not list', () => {
    expect(commands).not.toMatch(/(?:^|[\s|(])jq\s/m);
    if (/python3 -c/.test(commands)) expect(readme).toMatch(/also use `curl` and `python3`/);
  });
});

describe('the webhook example', () => {
  it('registers a loopback receiver the allow-list admits, with a secret of 16+ characters', () => {
    const register = /api\/v1\/webhooks .*?-d '(\{[^']*\})'/.exec(commands);
    const body = JSON.parse(register?.[1] ?? '{}');
    expect(new URL(body.url).hostname).toBe('127.0.0.1');
    expect(body.secret.length).toBeGreaterThanOrEqual(16);
    expect(commands).toContain('WEIR_WEBHOOK_ALLOWED_CIDRS=127.0.0.1/32');
    expect(commands).toContain(`node examples/webhook-receiver.mjs ${new URL(body.url).port} ${body.secret}`);
  });

  it('has a receiver that answers a POST with 2xx and checks its signature', async () => {
    const port = await freePort();
    const receiver = spawn(process.execPath, [
      'examples/webhook-receiver.mjs',
      String(port),
      'a-secret-of-16-chars',
    ]);
    let output = '';
    receiver.stdout.on('data', (chunk) => {
      output += chunk;
    });
    try {
      await new Promise<void>((resolve, reject) => {
        receiver.stdout.once('data', () => resolve());
        receiver.once('exit', () => reject(new Error(`receiver exited: ${output}`)));
      });
      const body = '{"type":"execution.completed"}';
      const send = (signature: string) =>
        fetch(`http://127.0.0.1:${port}/`, {
          method: 'POST',
          body,
          headers: { 'x-svc-event': 'execution.completed', 'x-svc-signature': signature },
        });
      const signed = await send(
        `sha256=${createHmac('sha256', 'a-secret-of-16-chars').update(body).digest('hex')}`,
      );
      expect(signed.status).toBe(204);
      const forged = await send('sha256=00');
      expect(forged.status).toBe(204);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(output).toMatch(/execution\.completed delivery - signature valid: \{"type"/);
      expect(output).toMatch(/signature INVALID/);
    } finally {
      receiver.kill();
    }
  });
});

describe('npm', () => {
  it('reads .npmrc without a warning, and skips dependency install scripts', async () => {
    const { stdout, stderr } = await promisify(execFile)('npm', ['config', 'get', 'ignore-scripts'], {
      env: { ...process.env, npm_config_ignore_scripts: undefined } as NodeJS.ProcessEnv,
    });
    expect(stderr).not.toMatch(/warn/i);
    expect(stdout.trim()).toBe('true');
  });
});
