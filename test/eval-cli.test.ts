import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiRoot, citedSources } from '../src/evaluation/http-retrieve.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { cli } from './helpers/cli.js';
import { type DatabaseTarget, databaseTargets } from './helpers/databases.js';
import { seedKnowledgeFixture } from './helpers/knowledge-fixture.js';

describe('weir eval', () => {
  let test: TestApp;
  let url: string;
  let folder: string;
  beforeAll(async () => {
    test = await createTestApp(databaseTargets()[0] as DatabaseTarget);
    await seedKnowledgeFixture(test.database);
    await test.app.listen({ port: 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(test.app.server.address() as AddressInfo).port}`;
    folder = await mkdtemp(path.join(tmpdir(), 'weir-eval-'));
  });
  afterAll(async () => {
    await test?.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('prints a table per mode and the misses, and the same report as JSON', async () => {
    const file = path.join(folder, 'questions.jsonl');
    await writeFile(
      file,
      [
        '{"id": "run", "question": "How do I run a pipeline?", "expected": ["pipelines"], "style": "keyword", "language": "en"}',
        '{"id": "bil", "question": "Hva trenger en bil?", "expected": ["biler"], "style": "paraphrase", "language": "no"}',
        '{"id": "absent", "question": "quantum chromodynamics lattice", "expected": ["physics.html"]}',
      ].join('\n'),
    );
    const text = await cli('eval', file, '--url', url, '--modes', 'keyword,rrf', '--chat');
    expect(text.stderr).toBe('');
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`3 questions from ${file} against ${url}`);
    expect(text.stdout).toContain('## keyword: 3 questions');
    expect(text.stdout).toContain('## rrf: 3 questions');
    expect(text.stdout).toContain('## chat: 3 questions');
    expect(text.stdout).toContain('| subset | questions | hit@1 | hit@5 | hit@10 | MRR@10 | nDCG@10 |');
    expect(text.stdout).toMatch(/\| all \| 3 \| [\d.]+ \| [\d.]+ \| 0\.667 \| [\d.]+ \| [\d.]+ \|/);
    expect(text.stdout).toMatch(/\| style=paraphrase \| 1 \|/);
    expect(text.stdout).toMatch(/latency: p50 [\d.]+ ms, p99 [\d.]+ ms \(server: p50/);
    expect(text.stdout).toContain('- absent: quantum chromodynamics lattice');
    expect(text.stdout).toContain('    expected: physics.html (not returned)');

    const json = await cli(
      'eval',
      file,
      '--url',
      `${url}/api/v1/`,
      '--modes',
      'keyword',
      '--json',
      '--limit',
      '20',
    );
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout);
    expect(report.questions).toBe(3);
    expect(report.modes).toHaveLength(1);
    expect(report.modes[0]).toMatchObject({ mode: 'keyword', failed: 0, metrics: { hit_at_10: 0.6667 } });
    expect(report.modes[0].misses.map((miss: { id: string }) => miss.id)).toEqual(['absent']);
  });

  it('reads the older JSON array of {question, pages}', async () => {
    const file = path.join(folder, 'questions.json');
    await writeFile(file, JSON.stringify([{ question: 'dead tuples', pages: ['vacuum'] }]));
    const result = await cli('eval', file, '--url', url, '--modes', 'keyword', '--json');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).modes[0].metrics.hit_at_1).toBe(1);
  });

  // Six CLI processes, each starting tsx: up to a minute on a loaded two-core machine.
  it('reports failures with exit code 1 and usage errors with 2', async () => {
    const file = path.join(folder, 'one.jsonl');
    // The search API takes queries of up to 2,000 characters: this one answers 422.
    const long = 'vacuum '.repeat(300);
    await writeFile(
      file,
      `${JSON.stringify({ id: 'long', question: long, expected: ['vacuum'] })}\n{"question": "run", "expected": ["pipelines"], "extra": "ignored"}\n`,
    );
    const failing = await cli('eval', file, '--url', url, '--modes', 'keyword');
    expect(failing.code).toBe(1);
    expect(failing.stdout).toContain('## keyword: 2 questions, 1 failed');
    expect(failing.stdout).toMatch(/failed \(1\): HTTP 422: .* \[long\]/);
    const unknownMode = await cli('eval', file, '--modes', 'bm25');
    expect(unknownMode.code).toBe(2);
    expect(unknownMode.stderr).toContain('--modes takes keyword, vector, rrf and chat');
    expect((await cli('eval', file, '--limit', '0')).code).toBe(2);
    expect((await cli('eval')).code).toBe(2);
    const bad = path.join(folder, 'bad.jsonl');
    await writeFile(bad, '{"question": "x", "expected": []}\n');
    const invalid = await cli('eval', bad);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('line 1: "expected" must be a non-empty list');
    const unreachable = await cli('eval', file, '--url', 'http://127.0.0.1:9');
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain('cannot reach http://127.0.0.1:9');
  }, 120_000);
});

describe('HTTP retrieval helpers', () => {
  it('finds the API root of a service URL', () => {
    expect(apiRoot('http://host:8080')).toBe('http://host:8080/api/v1');
    expect(apiRoot('http://host:8080/')).toBe('http://host:8080/api/v1');
    expect(apiRoot('http://host:8080/api/v1/')).toBe('http://host:8080/api/v1');
  });

  it('ranks the sources an answer cites, in citation order', () => {
    const source = (name: string) => ({ url: `http://host/${name}`, object_key: null });
    expect(
      citedSources([
        { citation: 2, cited: true, source: source('b') },
        { citation: 1, cited: false, source: source('a') },
        { citation: 3, cited: true, source: source('c') },
      ]),
    ).toEqual([source('b'), source('c')]);
  });
});
