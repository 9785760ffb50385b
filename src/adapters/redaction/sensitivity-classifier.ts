import { Type } from 'typebox';
import type { ChatMessage } from '../../llm/llm.js';
import {
  askModel,
  checkLlmProfile,
  llmProviderFor,
  llmStepConfig,
  parseJsonAnswer,
  quote,
  stringAt,
} from '../../llm/llm-step.js';
import { dottedPathPattern } from '../../redaction/field-paths.js';
import { defineAdapter } from '../adapter.js';

const TYPE = 'sensitivity_classifier';

export const sensitivityClassifier = defineAdapter({
  type: TYPE,
  group: 'redaction',
  summary: 'Ask a language model for the sensitivity tier of the content; record it in metadata.',
  description:
    'Second step of the redaction chain (pii_redactor, sensitivity_classifier, anti_bac_gate, sc_redactor). Sends the ' +
    'first `content_cutoff` characters of `content_field` (a dotted payload path) to the model of `llm_profile` and ' +
    'asks for a JSON object `{"tier", "reason"}` with `tier` one of `tiers` (least to most sensitive). The answer is ' +
    'parsed strictly: anything else fails the message with the raw answer quoted. The payload passes through ' +
    'unchanged; metadata `sensitivity` becomes `{tier, reason, model}` for sc_redactor and lineage. Needs an `openai` ' +
    'profile: the offline `extractive` profile cannot classify, so naming it (or an unknown profile) fails at start. ' +
    'A payload without text at `content_field` fails.',
  config: Type.Object(
    {
      llm_profile: llmStepConfig.llm_profile,
      content_field: Type.String({
        default: 'markdown',
        pattern: dottedPathPattern,
        description: 'dotted payload path of the text to classify',
      }),
      tiers: Type.Array(Type.String({ pattern: '^[a-z][a-z0-9_]*$' }), {
        default: ['public', 'internal', 'confidential', 'strictly_confidential'],
        minItems: 2,
        uniqueItems: true,
        description: 'sensitivity tiers, least to most sensitive',
      }),
      content_cutoff: llmStepConfig.content_cutoff,
    },
    { additionalProperties: false },
  ),
  input: Type.Object({}, { description: 'any payload with text at content_field' }),
  output: Type.Object({}, { description: 'the input payload, unchanged' }),
  checkSettings: checkLlmProfile,
  create: (config, resources) => {
    const provider = llmProviderFor(resources.settings, config.llm_profile, TYPE);
    const model = provider.modelFor({});
    return async (payload, context) => {
      const content = stringAt(payload, config.content_field);
      if (content === undefined) {
        throw new Error(`${TYPE}: the payload has no text at ${config.content_field}`);
      }
      const answer = await askModel(
        provider,
        classificationPrompt(content.slice(0, config.content_cutoff), config.tiers, context.metadata),
        TYPE,
        context.signal,
      );
      const verdict = parseJsonAnswer(answer, TYPE);
      const { tier, reason } = verdict;
      if (typeof tier !== 'string' || !config.tiers.includes(tier)) {
        throw new Error(
          `${TYPE}: the model answered a tier outside ${config.tiers.join(', ')}: ${quote(answer)}`,
        );
      }
      if (typeof reason !== 'string') {
        throw new Error(`${TYPE}: the model answered no reason: ${quote(answer)}`);
      }
      return [{ payload, metadata: { sensitivity: { tier, reason, model } } }];
    };
  },
});

function classificationPrompt(
  content: string,
  tiers: readonly string[],
  metadata: Readonly<Record<string, unknown>>,
): ChatMessage[] {
  // pii_redactor's counts tell the model that identifiers were there even though it sees
  // only `[REDACTED:kind]` markers.
  const redactions = metadata.pii_redactions;
  const redactionNote =
    redactions && typeof redactions === 'object' && Object.keys(redactions).length > 0
      ? `\nPersonal identifiers already redacted from it (counts by kind): ${JSON.stringify(redactions)}.`
      : '';
  return [
    {
      role: 'system',
      content:
        'You classify documents of an organisation by sensitivity. The tiers, from least to most sensitive, are: ' +
        `${tiers.join(', ')}. Pick the lowest tier that fits the most sensitive part of the document. ` +
        'Answer with only a JSON object, no other text: {"tier": "<one of the tiers>", "reason": "<one short sentence>"}.',
    },
    { role: 'user', content: `Document:${redactionNote}\n<<<\n${content}\n>>>` },
  ];
}
