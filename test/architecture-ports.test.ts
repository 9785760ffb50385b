/**
 * Tests and benches that start a server in another process take its port from
 * test/helpers/ports.ts (`freePort`): drawn below the kernel's ephemeral range and checked
 * free. A port drawn as `20000 + random(20000)` fell in the ephemeral range often enough that
 * a child `weir serve` exited with EADDRINUSE in CI (stop 47). This test fails when a port is
 * drawn at random anywhere else under test/ or bench/.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');
/** `<number> + Math.floor(Math.random() * ...)`: how a port was drawn before. */
const randomPort = /\b\d{3,5}\s*\+\s*Math\.floor\(\s*Math\.random\(\)/;

function typescriptFiles(directory: string): string[] {
  return readdirSync(path.join(root, directory), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts') && !name.includes('node_modules'))
    .map((name) => path.join(directory, name));
}

describe('ports of servers started by tests and benches', () => {
  it('are taken from freePort, never drawn at random in place', () => {
    const files = [...typescriptFiles('test'), ...typescriptFiles('bench')];
    // This file names the old way on purpose (the second test).
    const others = files.filter((file) => file !== path.join('test', 'architecture-ports.test.ts'));
    const findings = others.flatMap((file) =>
      readFileSync(path.join(root, file), 'utf8')
        .split('\n')
        .flatMap((line, index) => (randomPort.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
    );
    expect(findings).toEqual([]);
  });

  it('finds a port drawn the old way', () => {
    expect(randomPort.test('const port = 20000 + Math.floor(Math.random() * 20000);')).toBe(true);
    expect(randomPort.test('const port = await freePort();')).toBe(false);
  });
});
