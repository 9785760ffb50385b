import { Type } from 'typebox';
import { fieldPathPattern, rewriteStrings } from '../../redaction/field-paths.js';
import { type IdentifierKind, identifierKinds, redactIdentifiers } from '../../redaction/identifiers.js';
import { defineAdapter } from '../adapter.js';

export const piiRedactor = defineAdapter({
  type: 'pii_redactor',
  group: 'redaction',
  summary:
    'Redact structured personal identifiers (national ids, IBAN, payment cards, e-mail) in text fields.',
  description:
    'First step of the redaction chain (pii_redactor, sensitivity_classifier, anti_bac_gate, sc_redactor). Finds ' +
    'candidates by pattern and keeps only checksum-valid ones (Norwegian fødselsnummer/D-number mod 11, Swedish ' +
    'personnummer Luhn, Finnish HETU mod 31, Danish CPR real calendar date (no checksum since 2007), IBAN mod 97, payment cards Luhn), so look-alike ' +
    'numbers stay. Passes the payload through with the listed text fields redacted; the counts per kind go into ' +
    'the envelope metadata `pii_redactions` for later stages and lineage. Field paths are dotted; `[]` walks an ' +
    'array (`segments[].text`). Missing fields are ignored.',
  config: Type.Object(
    {
      kinds: Type.Array(Type.Union(identifierKinds.map((kind) => Type.Literal(kind))), {
        default: [...identifierKinds],
        minItems: 1,
        description: 'identifier kinds to redact',
      }),
      fields: Type.Array(Type.String({ pattern: fieldPathPattern }), {
        default: ['markdown', 'text', 'html', 'content', 'segment.text', 'segments[].text'],
        minItems: 1,
        description: 'payload fields holding text to redact',
      }),
      replacement: Type.String({
        default: '[REDACTED:{kind}]',
        description: 'replacement text; `{kind}` becomes the identifier kind',
      }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({}, { description: 'any payload; the configured text fields are redacted' }),
  output: Type.Object({}, { description: 'the input payload with the configured fields redacted' }),
  create: (config) => {
    const kinds = config.kinds as IdentifierKind[];
    return async (payload) => {
      const counts: Record<string, number> = {};
      const redact = (text: string) => {
        const result = redactIdentifiers(text, kinds, config.replacement);
        for (const [kind, count] of Object.entries(result.counts))
          counts[kind] = (counts[kind] ?? 0) + (count ?? 0);
        return result.text;
      };
      const copy = structuredClone(payload);
      for (const field of config.fields) rewriteStrings(copy, field, redact);
      return [{ payload: copy, metadata: { pii_redactions: counts } }];
    };
  },
});
