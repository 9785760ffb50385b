import { randomUUID } from 'node:crypto';
import { Value } from 'typebox/value';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { startLlmServer } from '../../../test/helpers/llm-server.js';
import { collectOutputs, createAdapterTestKit } from '../adapter-testing.js';
import { antiBacGate } from './anti-bac-gate.js';

const llm = await startLlmServer();
const kit = await createAdapterTestKit({
  settings: {
    llm_profiles: [
      { name: 'extractive', provider: 'extractive', timeout_ms: 60_000 },
      { name: 'guard', provider: 'openai', base_url: llm.baseUrl, model: 'guard-model', timeout_ms: 60_000 },
    ],
  },
});
afterAll(async () => {
  await kit.close();
  await llm.close();
});
beforeEach(() => {
  llm.behaviour = 'answer';
  llm.requests = [];
});

const configOf = (config: Record<string, unknown>) =>
  Value.Default(antiBacGate.config, structuredClone(config)) as never;
const metadata = {
  origin: 'public website',
  document: {
    source_key: 'https://hr.intra.example/salaries',
    url: null,
    title: 'Salaries',
    language: 'english',
  },
};
// The verdict cache lives for the process: each test sends content of its own.
const unique = (text: string) => `${text} (${randomUUID()})`;

describe('anti_bac_gate', () => {
  const handler = antiBacGate.create(configOf({ llm_profile: 'guard' }), kit.resources);
  const run = async (payload: Record<string, unknown>, meta: Record<string, unknown> = metadata) =>
    collectOutputs(await handler(payload, kit.context({ metadata: meta })));

  it('blanks the body and quarantines a flagged message, sending origin and source', async () => {
    llm.answer = '{"flagged": true, "reason": "HR salary data in a public space."}';
    const markdown = unique('# Salaries\n\nAnna: 800 000');
    const [output] = await run({ markdown, front_matter: { title: 'Salaries' } });
    expect(output?.payload).toEqual({ markdown: '', front_matter: { title: 'Salaries' } });
    expect(output?.metadata).toEqual({
      quarantine: { flagged: true, reason: 'HR salary data in a public space.' },
    });
    const sent = llm.requests[0]?.body.messages[1]?.content;
    expect(sent).toContain('Source: https://hr.intra.example/salaries\nOrigin: public website');
    expect(sent).toContain(markdown);
    expect(llm.requests[0]?.body.model).toBe('guard-model');
  });

  it('passes an unflagged message through and reads configured payload fields', async () => {
    llm.answer = '{"flagged": false, "reason": "Public product page."}';
    const gate = antiBacGate.create(
      configOf({
        llm_profile: 'guard',
        content_field: 'page.body',
        origin_field: 'space',
        source_ref_field: 'url',
      }),
      kit.resources,
    );
    const payload = { page: { body: unique('Product news') }, space: 'PUB', url: 'https://www.example/news' };
    const [output] = await collectOutputs(await gate(payload, kit.context()));
    expect(output?.payload).toEqual(payload);
    expect(output?.metadata).toEqual({ quarantine: { flagged: false, reason: 'Public product page.' } });
    expect(llm.requests[0]?.body.messages[1]?.content).toMatch(
      /^Source: https:\/\/www\.example\/news\nOrigin: PUB/,
    );
  });

  it('asks once for identical content, again for the same content from another origin', async () => {
    llm.answer = '{"flagged": true, "reason": "restricted"}';
    const markdown = unique('Board minutes');
    const [first] = await run({ markdown });
    llm.answer = '{"flagged": false, "reason": "changed mind"}'; // would differ if asked again
    const [second] = await run({ markdown });
    expect(llm.requests).toHaveLength(1);
    expect(second?.metadata).toEqual(first?.metadata);
    expect(second?.payload).toEqual({ markdown: '' });
    await run({ markdown }, { ...metadata, origin: 'board space' });
    expect(llm.requests).toHaveLength(2);
  });

  it('fails a message on a malformed answer or a model failure, and caches no failure', async () => {
    llm.answer = '{"flagged": "yes", "reason": "r"}';
    const markdown = unique('text');
    await expect(run({ markdown })).rejects.toThrow(
      'anti_bac_gate: the model answered no boolean "flagged" with a "reason": "{\\"flagged\\": \\"yes\\", \\"reason\\": \\"r\\"}"',
    );
    llm.answer = 'No violation.';
    await expect(run({ markdown })).rejects.toThrow(/did not answer with JSON: "No violation\."/);
    llm.behaviour = 'http-500';
    await expect(run({ markdown })).rejects.toThrow(
      /^anti_bac_gate: language model of profile guard answered HTTP 500/,
    );
    expect(llm.requests).toHaveLength(3);
    await expect(run({ html: 'no markdown' })).rejects.toThrow(
      'anti_bac_gate: the payload has no text at markdown',
    );
  });

  it('has exactly the spec keys and refuses unknown or extractive profiles', () => {
    expect(Object.keys(antiBacGate.config.properties).sort()).toEqual(
      ['content_cutoff', 'content_field', 'llm_profile', 'origin_field', 'source_ref_field'].sort(),
    );
    expect(Value.Check(antiBacGate.config, configOf({ llm_profile: 'guard', cache: false }))).toBe(false);
    expect(Value.Check(antiBacGate.config, configOf({ llm_profile: 'guard', content_field: 'a[]' }))).toBe(
      false,
    );
    expect(() => antiBacGate.create(configOf({ llm_profile: 'none' }), kit.resources)).toThrow(
      'anti_bac_gate: llm profile "none" is not configured; llm_profiles has extractive, guard',
    );
    expect(() => antiBacGate.create(configOf({ llm_profile: 'extractive' }), kit.resources)).toThrow(
      /name an openai profile/,
    );
  });
});
