import { describe, expect, it } from 'vitest';
import {
  hashConfig,
  MAX_CONFIG_BYTES,
  MAX_CONFIG_NODES,
  nestingExceeds,
  parseConfigYaml,
} from './parse-config.js';

describe('parseConfigYaml', () => {
  it('locates nodes by path, and a missing node at its parent', () => {
    const parsed = parseConfigYaml('name: x\nroutes:\n  - id: a\n    adapters: []\n');
    if (!parsed.ok) throw new Error('should parse');
    expect(parsed.locate(['routes', 0, 'id'])).toEqual({ line: 3, column: 9 });
    expect(parsed.locate(['routes', 0, 'missing'])).toEqual({ line: 3, column: 5 });
  });

  it.each([
    ['flow nesting', (depth: number) => `routes: ${'['.repeat(depth)}${']'.repeat(depth)}\n`],
    [
      'block nesting',
      (depth: number) =>
        `routes:\n${Array.from({ length: Math.min(depth, 1200) }, (_, level) => `${' '.repeat(level)}- `).join('\n')}x\n`,
    ],
  ])('refuses absurd %s with a clear message instead of crashing', (_kind, build) => {
    for (const depth of [80, 1200, 100_000]) {
      const parsed = parseConfigYaml(build(depth));
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.problems[0]?.message).toBe('the YAML is nested more than 64 levels deep');
    }
  });

  it('refuses absurd nesting before the parser recurses into it', () => {
    expect(nestingExceeds(`a: ${'['.repeat(65)}`, 64)).toBe(true);
    expect(nestingExceeds(`a: "${'['.repeat(100)}"\nb: 1 # ${'{'.repeat(100)}\n`, 64)).toBe(false);
    expect(nestingExceeds(`${'- '.repeat(200)}x\n`, 64)).toBe(true);
    expect(nestingExceeds(`${' '.repeat(300)}x: 1\n`, 64)).toBe(true);
    expect(
      nestingExceeds('routes:\n  - id: a\n    adapters: [{ type: b, config: { x: [1, 2] } }]\n', 64),
    ).toBe(false);
  });

  it('reports a duplicate key at its line and column, in any mapping, and keeps 1 and "1" apart', () => {
    const parsed = parseConfigYaml('name: a\nroutes:\n  - id: x\n    adapters: []\n    id: y\n');
    expect(parsed).toEqual({
      ok: false,
      problems: [{ message: 'Map keys must be unique', line: 5, column: 5 }],
    });
    expect(parseConfigYaml('labels: { 1: a, "1": b }\n').ok).toBe(true);
  });

  it('checks 76,000 keys in one pass and refuses more than 100,000 nodes', () => {
    // Quadratic before: this document held the event loop for about a minute (issue 17 item 1).
    // (Now 49,000 keys: 76,000 pairs are refused by the node count before their keys are compared.)
    const keys = Array.from({ length: 49_000 }, (_, index) => `k${index}: ${index}`).join('\n');
    expect(parseConfigYaml(`${keys}\nk48999: again\n`)).toMatchObject({
      ok: false,
      problems: [{ message: 'Map keys must be unique', line: 49_001, column: 1 }],
    });
    const wide = Array.from({ length: 76_000 }, (_, index) => `k${index}: ${index}`).join('\n');
    // Without the duplicate, 76,000 pairs are 152,000 nodes: past the bound.
    expect(parseConfigYaml(wide)).toMatchObject({
      ok: false,
      problems: [{ message: /more than 100000 nodes/ }],
    });
    const fine = Array.from({ length: 40_000 }, (_, index) => `k${index}: ${index}`).join('\n');
    expect(parseConfigYaml(fine).ok).toBe(true);
    const many = `items: [${Array.from({ length: MAX_CONFIG_NODES }, () => '1').join(',')}]\n`;
    expect(parseConfigYaml(many)).toMatchObject({
      ok: false,
      problems: [{ message: `the YAML has more than ${MAX_CONFIG_NODES} nodes` }],
    });
  });

  it('refuses a config over the size limit', () => {
    const parsed = parseConfigYaml(`name: ${'x'.repeat(MAX_CONFIG_BYTES)}\n`);
    expect(parsed.ok).toBe(false);
  });

  it('does not execute or resolve custom tags', () => {
    const parsed = parseConfigYaml('name: !!js/function "function () { return 1 }"\nroutes: []\n');
    if (!parsed.ok) throw new Error(parsed.problems[0]?.message);
    expect((parsed.value as { name: unknown }).name).toBe('function () { return 1 }');
  });

  it('hashes the exact text', () => {
    expect(hashConfig('a')).toBe('ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb');
    expect(hashConfig('a\n')).not.toBe(hashConfig('a'));
  });
});
