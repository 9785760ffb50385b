import { Value } from 'typebox/value';
import { afterAll, describe, expect, it } from 'vitest';
import { collectOutputs, createAdapterTestKit } from '../adapter-testing.js';
import { piiRedactor } from './pii-redactor.js';

const kit = await createAdapterTestKit();
afterAll(() => kit.close());
const defaults = Value.Default(piiRedactor.config, {}) as never;

describe('pii_redactor', () => {
  it('redacts markdown, a segment and every segment of a list, and reports counts in metadata', async () => {
    const handler = piiRedactor.create(defaults, kit.resources);
    const [output] = await collectOutputs(
      await handler(
        {
          markdown: 'Kontonummer NO93 8601 1117 947.',
          segment: { text: 'Fnr 01010750160', token_count: 3 },
          segments: [{ text: 'a@b.no' }, { text: 'nothing here' }],
          url: 'https://example.no/01010750160',
        },
        kit.context(),
      ),
    );
    expect(output?.payload).toEqual({
      markdown: 'Kontonummer [REDACTED:iban].',
      segment: { text: 'Fnr [REDACTED:national_id_no]', token_count: 3 },
      segments: [{ text: '[REDACTED:email]' }, { text: 'nothing here' }],
      url: 'https://example.no/01010750160', // not a configured field
    });
    expect(output?.metadata).toEqual({ pii_redactions: { iban: 1, national_id_no: 1, email: 1 } });
  });

  it('refuses an invalid field path or an unknown kind in its config', () => {
    expect(Value.Check(piiRedactor.config, { fields: ['a..b'] })).toBe(false);
    expect(Value.Check(piiRedactor.config, { kinds: ['passport'] })).toBe(false);
  });
});
