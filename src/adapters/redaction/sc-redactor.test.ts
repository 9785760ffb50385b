import { Value } from 'typebox/value';
import { afterAll, describe, expect, it } from 'vitest';
import { collectOutputs, createAdapterTestKit } from '../adapter-testing.js';
import { scRedactor } from './sc-redactor.js';

const kit = await createAdapterTestKit();
afterAll(() => kit.close());

describe('sc_redactor', () => {
  const handler = scRedactor.create(Value.Default(scRedactor.config, {}) as never, kit.resources);
  const payload = {
    markdown: '# Board minutes',
    html: '<h1>Board minutes</h1>',
    segments: [{ text: 'one', token_count: 1 }, { text: 'two' }],
    url: 'https://intra.example/board',
    front_matter: { title: 'Board minutes' },
  };
  const run = async (metadata: Record<string, unknown>) =>
    collectOutputs(await handler(structuredClone(payload), kit.context({ metadata })));

  it('blanks the body fields of a strictly confidential message and keeps the rest', async () => {
    const [output] = await run({ sensitivity: { tier: 'strictly_confidential', reason: 'r', model: 'm' } });
    expect(output?.payload).toEqual({
      markdown: '',
      html: '',
      segments: [{ text: '', token_count: 1 }, { text: '' }],
      url: 'https://intra.example/board',
      front_matter: { title: 'Board minutes' },
    });
    expect(output?.metadata).toEqual({ redacted: true });
  });

  it('passes other tiers through, honours configured tiers, and fails an unclassified message', async () => {
    const [kept] = await run({ sensitivity: { tier: 'confidential' } });
    expect(kept?.payload).toEqual(payload);
    expect(kept?.metadata).toEqual({ redacted: false });
    const strict = scRedactor.create(
      Value.Default(scRedactor.config, { tiers: ['confidential'], fields: ['markdown'] }) as never,
      kit.resources,
    );
    const [blanked] = await collectOutputs(
      await strict(
        structuredClone(payload),
        kit.context({ metadata: { sensitivity: { tier: 'confidential' } } }),
      ),
    );
    expect(blanked?.payload).toMatchObject({ markdown: '', html: '<h1>Board minutes</h1>' });
    await expect(run({})).rejects.toThrow('sc_redactor: the message has no metadata.sensitivity.tier');
    expect(Value.Check(scRedactor.config, { fields: ['a..b'] })).toBe(false);
    expect(Value.Check(scRedactor.config, { tiers: [] })).toBe(false);
  });
});
