import { Value } from 'typebox/value';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { startLlmServer } from '../../../test/helpers/llm-server.js';
import { collectOutputs, createAdapterTestKit } from '../adapter-testing.js';
import { sensitivityClassifier } from './sensitivity-classifier.js';

const llm = await startLlmServer();
const kit = await createAdapterTestKit({
  settings: {
    llm_profiles: [
      { name: 'extractive', provider: 'extractive', timeout_ms: 60_000 },
      { name: 'judge', provider: 'openai', base_url: llm.baseUrl, model: 'judge-model', timeout_ms: 60_000 },
      { name: 'slow', provider: 'openai', base_url: llm.baseUrl, model: 'judge-model', timeout_ms: 150 },
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
  Value.Default(sensitivityClassifier.config, structuredClone(config)) as never;
const classify = async (payload: Record<string, unknown>, config: Record<string, unknown> = {}) => {
  const handler = sensitivityClassifier.create(configOf({ llm_profile: 'judge', ...config }), kit.resources);
  return collectOutputs(await handler(payload, kit.context({ metadata: { pii_redactions: { iban: 2 } } })));
};

describe('sensitivity_classifier', () => {
  it('asks the model for a tier, passes the payload through and records {tier, reason, model}', async () => {
    llm.answer = '{"tier": "confidential", "reason": "Salary figures of named staff."}';
    const payload = { markdown: '# Pay\n\nAnna earns 800 000 NOK.', front_matter: { title: 'Pay' } };
    const [output, ...rest] = await classify(payload);
    expect(rest).toHaveLength(0);
    expect(output?.payload).toEqual(payload);
    expect(output?.metadata).toEqual({
      sensitivity: { tier: 'confidential', reason: 'Salary figures of named staff.', model: 'judge-model' },
    });
    const sent = llm.requests[0]?.body;
    expect(sent?.model).toBe('judge-model');
    expect(sent?.messages[0]?.content).toContain('public, internal, confidential, strictly_confidential');
    expect(sent?.messages[1]?.content).toContain('Anna earns 800 000 NOK.');
    expect(sent?.messages[1]?.content).toContain('{"iban":2}');
  });

  it('sends only content_cutoff characters of content_field, and accepts a fenced JSON answer', async () => {
    llm.answer = '```json\n{"tier": "secret", "reason": "r"}\n```';
    const text = `${'a'.repeat(150)}${'Z'.repeat(100)}`;
    const [output] = await classify(
      { page: { body: text } },
      { content_field: 'page.body', tiers: ['open', 'secret'], content_cutoff: 150 },
    );
    expect(output?.metadata).toMatchObject({ sensitivity: { tier: 'secret' } });
    expect(llm.requests[0]?.body.messages[1]?.content).toContain('a'.repeat(150));
    expect(llm.requests[0]?.body.messages[1]?.content).not.toContain('Z');
  });

  it('fails a message when the answer is outside the tiers, not JSON, or lacks a reason, quoting it', async () => {
    llm.answer = `{"tier": "top_secret", "reason": "${'x'.repeat(400)}"}`;
    const failure = classify({ markdown: 'text' });
    await expect(failure).rejects.toThrow(
      /tier outside public, internal, confidential, strictly_confidential/,
    );
    await expect(failure).rejects.toThrow(/top_secret.*x{10}\.\.\."$/);
    llm.answer = 'I think this is internal.';
    await expect(classify({ markdown: 'text' })).rejects.toThrow(
      'sensitivity_classifier: the model did not answer with JSON: "I think this is internal."',
    );
    llm.answer = '{"tier": "internal"}';
    await expect(classify({ markdown: 'text' })).rejects.toThrow(/answered no reason/);
  });

  it('fails a message when the model fails or times out, and one without text', async () => {
    llm.behaviour = 'http-500';
    await expect(classify({ markdown: 'text' })).rejects.toThrow(
      /^sensitivity_classifier: language model of profile judge answered HTTP 500: .*model overloaded/,
    );
    llm.behaviour = 'stall';
    await expect(classify({ markdown: 'text' }, { llm_profile: 'slow' })).rejects.toThrow(
      /did not answer within 150 ms/,
    );
    llm.behaviour = 'answer';
    await expect(classify({ markdown: 42 })).rejects.toThrow('the payload has no text at markdown');
  });

  it('refuses an unknown or extractive profile at creation, and a bad config', () => {
    expect(() => sensitivityClassifier.create(configOf({ llm_profile: 'gpt' }), kit.resources)).toThrow(
      'sensitivity_classifier: llm profile "gpt" is not configured; llm_profiles has extractive, judge, slow',
    );
    expect(() =>
      sensitivityClassifier.create(configOf({ llm_profile: 'extractive' }), kit.resources),
    ).toThrow(/is extractive, which cannot answer this step; name an openai profile/);
    expect(Value.Check(sensitivityClassifier.config, configOf({}))).toBe(false); // llm_profile required
    expect(Value.Check(sensitivityClassifier.config, configOf({ llm_profile: 'judge' }))).toBe(true);
    expect(
      Value.Check(sensitivityClassifier.config, configOf({ llm_profile: 'judge', tiers: ['one'] })),
    ).toBe(false);
    expect(
      Value.Check(sensitivityClassifier.config, configOf({ llm_profile: 'judge', content_cutoff: 10 })),
    ).toBe(false);
  });
});
