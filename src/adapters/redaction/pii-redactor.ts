import { Type } from 'typebox';
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
    'personnummer Luhn, Finnish HETU mod 31, Danish CPR date, IBAN mod 97, payment cards Luhn), so look-alike ' +
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
      fields: Type.Array(Type.String({ pattern: '^[A-Za-z0-9_]+(\\[\\])?(\\.[A-Za-z0-9_]+(\\[\\])?)*$' }), {
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
    const paths = config.fields.map((field) => field.split('.'));
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
      for (const path of paths) rewrite(copy, path, redact);
      return [{ payload: copy, metadata: { pii_redactions: counts } }];
    };
  },
});

/** Applies `change` to every string at `path` inside `value` (mutates the copy). */
function rewrite(value: unknown, path: readonly string[], change: (text: string) => string): void {
  const [head, ...rest] = path;
  if (head === undefined || value === null || typeof value !== 'object') return;
  const isArray = head.endsWith('[]');
  const key = isArray ? head.slice(0, -2) : head;
  const container = value as Record<string, unknown>;
  const child = container[key];
  if (isArray) {
    if (!Array.isArray(child)) return;
    child.forEach((item, index) => {
      if (rest.length === 0) {
        if (typeof item === 'string') child[index] = change(item);
      } else rewrite(item, rest, change);
    });
    return;
  }
  if (rest.length === 0) {
    if (typeof child === 'string') container[key] = change(child);
    return;
  }
  rewrite(child, rest, change);
}
