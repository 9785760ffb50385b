import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * An idle worker thread (config parsing, webhook signing) must not keep the process alive: a
 * bench or CLI that parsed one config used to finish its work and then never exit.
 */
const root = path.resolve(import.meta.dirname, '..');
const exitsAfter = (script: string) =>
  spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: root,
    timeout: 30_000,
    encoding: 'utf8',
  });

describe('idle worker threads', () => {
  it('let the process exit once a config was parsed off the service thread', () => {
    const run = exitsAfter(
      `import { parseConfigYamlOffThread } from './src/engine/config/parse-thread.ts';
       const parsed = await parseConfigYamlOffThread('name: x\\n');
       console.log(parsed.ok);`,
    );
    expect(run.error).toBeUndefined(); // a spawnSync timeout sets error (ETIMEDOUT)
    expect(run.status).toBe(0);
    expect(run.stdout.trim()).toBe('true');
  }, 40_000);
});
