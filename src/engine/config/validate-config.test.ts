import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { defineAdapter } from '../../adapters/adapter.js';
import { createBuiltinRegistry } from '../../adapters/builtin.js';
import { validateConfigYaml } from './validate-config.js';

const registry = createBuiltinRegistry();
const validate = (text: string) => validateConfigYaml(text, registry);
const codes = (text: string) => validate(text).findings.map((finding) => `${finding.code} ${finding.path}`);

const valid = `
name: load
routes:
  - id: load
    adapters:
      - type: synthetic_fanout
        config: { count: 5 }
        destination: sink
  - id: sink
    adapters:
      - type: synthetic_sink
        concurrency: 8
`;

describe('validateConfigYaml', () => {
  it('accepts a valid two-route config with no findings', () => {
    expect(validate(valid)).toEqual({ is_valid: true, error_count: 0, warning_count: 0, findings: [] });
  });

  it('reports a YAML syntax error as E100 with its line', () => {
    const report = validate('routes:\n  - id: a\n   adapters: [\n');
    expect(report.is_valid).toBe(false);
    expect(report.findings[0]).toMatchObject({ code: 'E100', severity: 'error' });
    expect(report.findings[0]?.line).toBeGreaterThan(0);
  });

  it('refuses a document that is not a mapping (E101)', () => {
    expect(codes('- just\n- a list\n')).toEqual(['E101 ']);
    expect(codes('')).toEqual(['E101 ']);
  });

  it('names missing required fields (E102) and wrong types (E103)', () => {
    expect(codes('name: x\n')).toEqual(['E102 routes']);
    expect(codes('routes:\n  - adapters:\n      - config: {}\n')).toEqual([
      'E102 routes[0].id',
      'E102 routes[0].adapters[0].type',
    ]);
    expect(codes('routes: nope\n')).toEqual(['E103 routes']);
  });

  it('refuses empty lists and bad values (E104)', () => {
    expect(codes('routes: []\n')).toEqual(['E104 routes']);
    expect(codes('routes:\n  - id: Bad Id\n    adapters: [{type: synthetic_sink}]\n')).toEqual([
      'E104 routes[0].id',
    ]);
    const concurrency = codes('routes:\n  - id: a\n    adapters: [{type: synthetic_sink, concurrency: 0}]\n');
    expect(concurrency).toEqual(['E104 routes[0].adapters[0].concurrency']);
  });

  it('reports duplicate route ids (E201) and stage names (E208)', () => {
    const text = `
routes:
  - id: a
    adapters:
      - type: synthetic_sink
      - type: synthetic_sink
  - id: a
    adapters: [{ type: synthetic_sink }]
`;
    expect(codes(text)).toEqual([
      'E208 routes[0].adapters[1].type',
      'E201 routes[1].id',
      'W503 routes[0].adapters[1]',
    ]);
  });

  it('reports an unknown adapter type with a suggestion (E202, spec example)', () => {
    const report = validate('routes:\n  - id: a\n    adapters: [{ type: synthetic_snk }]\n');
    expect(report.findings).toEqual([
      expect.objectContaining({
        code: 'E202',
        path: 'routes[0].adapters[0].type',
        remediation: 'Did you mean adapter type "synthetic_sink"?',
        line: 3,
      }),
    ]);
  });

  it('checks adapter config against the adapter schema (E203)', () => {
    const text =
      'routes:\n  - id: a\n    adapters: [{ type: synthetic_fanout, destination: a, config: { count: -1, colour: red } }]\n';
    expect(codes(text)).toEqual([
      'E203 routes[0].adapters[0].config',
      'E203 routes[0].adapters[0].config.count',
      'W505 routes[0].adapters[0].destination',
    ]);
  });

  it('warns of routes that send to each other in a cycle (W506), once per cycle, with the round trip', () => {
    const text = `
routes:
  - id: a
    adapters: [{ type: synthetic_fanout, config: { count: 1 }, destination: b }]
  - id: b
    adapters: [{ type: synthetic_fanout, config: { count: 1 }, destination: c }]
  - id: c
    adapters: [{ type: synthetic_fanout, config: { count: 1 }, destination: a }]
  - id: d
    adapters: [{ type: synthetic_fanout, destination: a }]
`;
    const report = validate(text);
    expect(report.is_valid).toBe(true);
    expect(report.findings).toMatchObject([
      {
        code: 'W506',
        path: 'routes[0].adapters[0].destination',
        message: 'routes "a" -> "b" -> "c" -> "a" send messages round in a cycle',
        line: 4,
      },
      { code: 'W502', path: 'routes[3].id' },
    ]);
    // A chain without a way back is no cycle; a self-loop stays W505 only.
    expect(codes(valid)).toEqual([]);
    expect(
      codes(
        'routes:\n  - id: a\n    adapters: [{ type: synthetic_fanout, config: { count: 1 }, destination: a }]\n',
      ),
    ).toEqual(['W505 routes[0].adapters[0].destination']);
  });

  it('refuses routes that fan out in a cycle (E216) unless the config allows fan-out cycles', () => {
    const pingPong = (count: number, allow = '') => `${allow}
routes:
  - id: ping
    adapters:
      - type: synthetic_fanout
        config: { count: 1 }
      - type: synthetic_fanout
        name: fanout
        config: { count: ${count} }
        destination: pong
  - id: pong
    adapters: [{ type: synthetic_fanout, config: { count: 1 }, destination: ping }]
`;
    const report = validate(pingPong(2));
    expect(report.is_valid).toBe(false);
    expect(report.findings).toMatchObject([
      {
        code: 'E216',
        severity: 'error',
        path: 'routes[0].adapters[1].destination',
        message:
          'routes "ping" -> "pong" -> "ping" send messages round in a cycle, and routes[0].adapters[1] ' +
          '(synthetic_fanout) may emit more than one message per input, so the run may grow without end',
      },
    ]);
    expect(report.findings[0]?.remediation).toContain('allow_fanout_cycles: true');
    // One message per input all the way round: a warning only, as before.
    expect(codes(pingPong(1))).toEqual(['W506 routes[0].adapters[1].destination']);
    // Opted in: the warning stays, and the message budget bounds the run.
    expect(codes(pingPong(2, 'allow_fanout_cycles: true'))).toEqual([
      'W506 routes[0].adapters[1].destination',
    ]);
    // A step past the one that leaves on the cycle is not on it; an undeclared adapter fans out.
    const pastTheCycle = `
routes:
  - id: a
    adapters:
      - { type: synthetic_fanout, config: { count: 1 }, destination: b }
      - { type: synthetic_fanout, name: after, config: { count: 5 } }
  - id: b
    adapters: [{ type: html_to_markdown, destination: a }]
`;
    const past = validate(pastTheCycle).findings;
    expect(past.map((finding) => `${finding.code} ${finding.path}`)).toEqual([
      'E216 routes[0].adapters[0].destination',
      'W504 routes[0].adapters[1]',
    ]);
    expect(past[0]?.message).toContain('routes[1].adapters[0] (html_to_markdown) may emit more than one');
    // A stage sending into its own route: the same rule, in place of W505.
    const selfLoop = (allow = '') =>
      `${allow}\nroutes:\n  - id: a\n    adapters: [{ type: synthetic_fanout, config: { count: 2 }, destination: a }]\n`;
    expect(codes(selfLoop())).toEqual(['E216 routes[0].adapters[0].destination']);
    expect(codes(selfLoop('allow_fanout_cycles: true'))).toEqual(['W505 routes[0].adapters[0].destination']);
  });

  it('checks max_messages_per_execution and allow_fanout_cycles as top-level fields', () => {
    expect(codes(`max_messages_per_execution: 500\nallow_fanout_cycles: false\n${valid}`)).toEqual([]);
    expect(codes(`max_messages_per_execution: 0\n${valid}`)).toEqual(['E104 max_messages_per_execution']);
    expect(codes(`max_messages_per_execution: 3000000000\n${valid}`)).toEqual([
      'E104 max_messages_per_execution',
    ]);
    expect(codes(`allow_fanout_cycles: sometimes\n${valid}`)).toEqual(['E103 allow_fanout_cycles']);
  });

  it('checks step configs against the settings when given: roots (E211), models (E212), profiles (E213)', async () => {
    const { loadSettings } = await import('../../settings.js');
    const settings = loadSettings({
      WEIR_FILESHARE_ROOTS: '/srv/shares',
      WEIR_EMBEDDING_MODELS: JSON.stringify([{ name: 'hash', provider: 'hash', dimensions: 64 }]),
    });
    const text = `
routes:
  - id: files
    adapters:
      - type: fileshare_enumerator
        config: { root: /srv/shares/../../etc }
        destination: embed
  - id: embed
    adapters:
      - type: embedding_generator
        config: { models: [hash, e5-large] }
      - type: llm_translator
        config: { llm_profile: extractive, target_language: nb }
`;
    const report = validateConfigYaml(text, registry, settings);
    expect(report.findings.map((finding) => `${finding.code} ${finding.path}`)).toEqual([
      'E211 routes[0].adapters[0].config.root',
      'E212 routes[1].adapters[0].config.models[1]',
      'E213 routes[1].adapters[1].config.llm_profile',
    ]);
    expect(report.findings[0]?.message).toBe(
      'share root /srv/shares/../../etc is outside the allowed roots (/srv/shares)',
    );
    expect(report.findings[0]?.line).toBe(6);
    expect(report.findings[2]?.message).toMatch(/extractive, which cannot answer this step/);
    // Inside the roots, configured names: clean. Without settings, nothing is checked.
    const fine = text
      .replace('/srv/shares/../../etc', '/srv/shares/team')
      .replace('[hash, e5-large]', '[hash]')
      .replace('llm_profile: extractive', 'llm_profile: gpt');
    const withGpt = loadSettings({
      WEIR_FILESHARE_ROOTS: '/srv/shares',
      WEIR_LLM_PROFILES: JSON.stringify([
        { name: 'gpt', provider: 'openai', model: 'm', base_url: 'http://127.0.0.1:1/v1' },
      ]),
    });
    expect(validateConfigYaml(fine, registry, withGpt).findings).toEqual([]);
    expect(validate(text).findings).toEqual([]);
    // The conversation exports' enumerator reads shares under the same rule.
    const exports = (root: string) =>
      validateConfigYaml(
        `routes:\n  - id: c\n    adapters:\n      - type: conv_enumerator\n        config: { root: ${root} }\n`,
        registry,
        settings,
      )
        .findings.filter((finding) => finding.code.startsWith('E'))
        .map((finding) => `${finding.code} ${finding.path}`);
    expect(exports('/etc')).toEqual(['E211 routes[0].adapters[0].config.root']);
    expect(exports('/srv/shares/chats')).toEqual([]);
  });

  it('counts a config `*_destination` as a route target, and reports one naming no route (E204)', () => {
    const wiki = (attachments: string) => `
name: wiki
routes:
  - id: crawl
    adapters:
      - type: synthetic_fanout
        config: { count: 1 }
        destination: pages
  - id: pages
    adapters:
      - type: wiki_page_fetcher
        config: { base_url: "https://acme.atlassian.net", token_secret: wiki, attachment_destination: ${attachments} }
        destination: sink
  - id: files
    adapters:
      - type: synthetic_sink
  - id: sink
    adapters:
      - type: synthetic_sink
`;
    expect(codes(wiki('files'))).toEqual([]);
    expect(codes(wiki('filez'))).toEqual([
      'E204 routes[1].adapters[0].config.attachment_destination',
      'W502 routes[2].id',
    ]);
  });

  it('reports a destination that names no route (E204) and an unknown init route (E209)', () => {
    const text = `
init_message: { route: lod }
routes:
  - id: load
    adapters: [{ type: synthetic_fanout, destination: sinc }]
`;
    const report = validate(text);
    expect(report.findings.map((finding) => finding.code)).toEqual(['E209', 'E204']);
    expect(report.findings[0]?.remediation).toBe('Did you mean route id "load"?');
  });

  it('refuses the metadata_extractor alias (E205, spec 2.3 rule 3)', () => {
    const report = validate('routes:\n  - id: a\n    adapters: [{ type: metadata_extractor }]\n');
    expect(report.findings).toEqual([
      expect.objectContaining({ code: 'E205', remediation: 'Use "type: html_to_markdown" instead.' }),
    ]);
  });

  it.each([
    'console',
    'queue_connectivity',
    'storage_accessibility',
  ])('refuses the monitoring check %s as a type (E206, rule 4)', (check) => {
    expect(codes(`routes:\n  - id: a\n    adapters: [{ type: ${check} }]\n`)).toEqual([
      'E206 routes[0].adapters[0].type',
    ]);
    expect(
      codes(`routes:\n  - id: a\n    type: ${check}\n    adapters: [{ type: synthetic_sink }]\n`),
    ).toEqual(['E206 routes[0].type']);
  });

  it('refuses replay as a type (E207, rule 5)', () => {
    expect(codes('routes:\n  - id: a\n    adapters: [{ type: replay }]\n')).toEqual([
      'E207 routes[0].adapters[0].type',
    ]);
  });

  it('accepts monitoring checks in the monitoring block and refuses unknown ones (E301)', () => {
    const text = `monitoring:\n  checks: [console, queue_connectivity, disk_space]\n${valid.replace('name: load\n', '')}`;
    expect(codes(text)).toEqual(['E301 monitoring.checks[2]']);
  });

  it('warns about unknown fields (W501), unreachable routes (W502) and dropped fan-out (W504)', () => {
    const text = `
colour: blue
routes:
  - id: a
    adapters: [{ type: synthetic_fanout }]
  - id: orphan
    adapters: [{ type: synthetic_sink }]
`;
    const report = validate(text);
    expect(report).toMatchObject({ is_valid: true, error_count: 0, warning_count: 3 });
    expect(report.findings.map((finding) => `${finding.code} ${finding.path}`)).toEqual([
      'W501 colour',
      'W504 routes[0].adapters[0]',
      'W502 routes[1].id',
    ]);
  });

  it('puts errors before warnings', () => {
    const text = 'colour: blue\nroutes:\n  - id: a\n    adapters: [{ type: nope }]\n';
    expect(validate(text).findings.map((finding) => finding.severity)).toEqual(['error', 'warning']);
  });

  it('is deterministic', () => {
    const text = 'routes:\n  - id: a\n    adapters: [{ type: replay }, { type: nope, destination: x }]\n';
    expect(validate(text)).toEqual(validate(text));
  });

  it('refuses duplicate keys and an alias bomb as parse errors', () => {
    expect(codes('routes: []\nroutes: []\n')).toEqual(['E100 ']);
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x","x"]',
      ...Array.from({ length: 9 }, (_, index) => {
        const name = String.fromCharCode(98 + index);
        const previous = String.fromCharCode(97 + index);
        return `${name}: &${name} [${Array(10).fill(`*${previous}`).join(',')}]`;
      }),
      'routes: *j',
    ].join('\n');
    expect(validate(bomb).findings[0]?.code).toBe('E100');
  });

  it('follows the live registry: a removed adapter makes the config invalid', () => {
    const custom = defineAdapter({
      type: 'custom_step',
      group: 'synthetic',
      summary: 'test adapter',
      config: Type.Object({}),
      input: Type.Object({}),
      output: Type.Object({}),
      create: () => async () => [],
    });
    const live = createBuiltinRegistry();
    live.register(custom);
    const text = 'routes:\n  - id: a\n    adapters: [{ type: custom_step }]\n';
    expect(validateConfigYaml(text, live).is_valid).toBe(true);
    live.unregister('custom_step');
    expect(validateConfigYaml(text, live).findings.map((finding) => finding.code)).toEqual(['E202']);
  });
});

describe('defaults in the pipeline schema', () => {
  it('lets fields with a default be left out', () => {
    const text =
      'routes:\n  - id: a\n    adapters: [{ type: synthetic_sink, retry: { max_attempts: 5 } }]\nmonitoring: {}\n';
    expect(validateConfigYaml(text, createBuiltinRegistry())).toMatchObject({ is_valid: true, findings: [] });
  });
});
