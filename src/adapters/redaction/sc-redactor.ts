import { Type } from 'typebox';
import { fieldPathPattern, rewriteStrings } from '../../redaction/field-paths.js';
import { defineAdapter } from '../adapter.js';

const TYPE = 'sc_redactor';

export const scRedactor = defineAdapter({
  type: TYPE,
  group: 'redaction',
  summary: 'Blank the body fields of content whose sensitivity tier is strictly confidential.',
  description:
    'Last step of the redaction chain (pii_redactor, sensitivity_classifier, anti_bac_gate, sc_redactor); no language ' +
    'model. Reads metadata `sensitivity.tier` (set by sensitivity_classifier): when it is one of `tiers`, every string at ' +
    'the `fields` paths (dotted; `[]` walks an array) becomes empty and metadata `redacted` is true; otherwise the payload ' +
    'passes through and `redacted` is false. Other fields (url, front matter, counts) are kept. A message without ' +
    '`sensitivity.tier` fails rather than passing unclassified content through: put sensitivity_classifier earlier.',
  config: Type.Object(
    {
      tiers: Type.Array(Type.String({ minLength: 1 }), {
        default: ['strictly_confidential'],
        minItems: 1,
        uniqueItems: true,
        description: 'sensitivity tiers whose bodies are blanked',
      }),
      fields: Type.Array(Type.String({ pattern: fieldPathPattern }), {
        default: ['markdown', 'html', 'text', 'segments[].text'],
        minItems: 1,
        description: 'payload fields holding the body',
      }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({}, { description: 'any payload; metadata.sensitivity.tier must be set' }),
  output: Type.Object({}, { description: 'the input payload, body fields blanked when the tier matches' }),
  create: (config) => {
    return async (payload, context) => {
      const sensitivity = context.metadata.sensitivity as { tier?: unknown } | undefined;
      const tier = sensitivity?.tier;
      if (typeof tier !== 'string') {
        throw new Error(
          `${TYPE}: the message has no metadata.sensitivity.tier; put sensitivity_classifier earlier in the route`,
        );
      }
      if (!config.tiers.includes(tier)) return [{ payload, metadata: { redacted: false } }];
      const copy = structuredClone(payload);
      for (const field of config.fields) rewriteStrings(copy, field, () => '');
      return [{ payload: copy, metadata: { redacted: true } }];
    };
  },
});
