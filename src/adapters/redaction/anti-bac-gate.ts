import { createHash } from 'node:crypto';
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
import { createVerdictCache } from '../../redaction/verdict-cache.js';
import { type AdapterContext, defineAdapter } from '../adapter.js';

const TYPE = 'anti_bac_gate';

interface Verdict {
  flagged: boolean;
  reason: string;
}

/**
 * Verdicts of every anti_bac_gate step of this process, keyed by profile, model and the SHA-256
 * of the text sent (content, origin and source reference together: the same content from
 * another origin is another question). Shared across executions so a re-run or replay of the
 * same content asks nothing; failures are never cached.
 */
const verdicts = createVerdictCache<Verdict>(5000);

export const antiBacGate = defineAdapter({
  type: TYPE,
  group: 'redaction',
  summary:
    'Ask a language model whether content breaks access control or organisation invariants; blank it when flagged.',
  description:
    'Third step of the redaction chain (pii_redactor, sensitivity_classifier, anti_bac_gate, sc_redactor). Sends the ' +
    'first `content_cutoff` characters of `content_field`, with the origin (`origin_field`: where the content is going, ' +
    'for example a space or audience) and the source reference (`source_ref_field`: where it came from), to the model of ' +
    '`llm_profile` and asks whether the content shows a broken-access-control or organisation-invariant violation (for ' +
    'example a document of a restricted source showing up in a public space). The answer must be a JSON object ' +
    '`{"flagged": boolean, "reason": string}`; anything else fails the message with the raw answer quoted. Flagged: ' +
    '`content_field` is blanked and metadata `quarantine` is `{flagged: true, reason}`; otherwise the payload passes ' +
    'through with `quarantine: {flagged: false, reason}`. Field paths are dotted; a path starting with `metadata.` reads ' +
    'the envelope metadata, any other reads the payload (a missing origin or source is sent as "unknown"). Verdicts are ' +
    'cached in process (LRU of 5000) by profile, model and SHA-256 of the text sent, so identical content asks once. ' +
    'Needs an `openai` profile; an unknown or extractive profile fails at start.',
  config: Type.Object(
    {
      llm_profile: llmStepConfig.llm_profile,
      content_field: Type.String({
        default: 'markdown',
        pattern: dottedPathPattern,
        description: 'dotted payload path of the body to judge (blanked when flagged)',
      }),
      origin_field: Type.String({
        default: 'metadata.origin',
        pattern: dottedPathPattern,
        description: 'where the content is published (dotted; `metadata.` reads envelope metadata)',
      }),
      source_ref_field: Type.String({
        default: 'metadata.document.source_key',
        pattern: dottedPathPattern,
        description: 'where the content came from (dotted; `metadata.` reads envelope metadata)',
      }),
      content_cutoff: llmStepConfig.content_cutoff,
    },
    { additionalProperties: false },
  ),
  input: Type.Object({}, { description: 'any payload with text at content_field' }),
  output: Type.Object({}, { description: 'the input payload, content_field blanked when flagged' }),
  checkSettings: checkLlmProfile,
  create: (config, resources) => {
    const provider = llmProviderFor(resources.settings, config.llm_profile, TYPE);
    const model = provider.modelFor({});
    const read = (path: string, payload: Record<string, unknown>, context: AdapterContext) =>
      path.startsWith('metadata.')
        ? stringAt(context.metadata, path.slice('metadata.'.length))
        : stringAt(payload, path);

    return async (payload, context) => {
      const content = stringAt(payload, config.content_field);
      if (content === undefined) {
        throw new Error(`${TYPE}: the payload has no text at ${config.content_field}`);
      }
      const messages = gatePrompt(
        content.slice(0, config.content_cutoff),
        read(config.origin_field, payload, context) ?? 'unknown',
        read(config.source_ref_field, payload, context) ?? 'unknown',
      );
      const digest = createHash('sha256')
        .update((messages[1] as ChatMessage).content)
        .digest('hex');
      const key = `${provider.profile}\u0000${model}\u0000${digest}`;
      let verdict = verdicts.get(key);
      if (!verdict) {
        verdict = parseVerdict(await askModel(provider, messages, TYPE, context.signal));
        verdicts.set(key, verdict);
      }
      if (!verdict.flagged) return [{ payload, metadata: { quarantine: { ...verdict } } }];
      const copy = structuredClone(payload);
      blank(copy, config.content_field);
      return [{ payload: copy, metadata: { quarantine: { ...verdict } } }];
    };
  },
});

function parseVerdict(answer: string): Verdict {
  const { flagged, reason } = parseJsonAnswer(answer, TYPE);
  if (typeof flagged !== 'boolean' || typeof reason !== 'string') {
    throw new Error(`${TYPE}: the model answered no boolean "flagged" with a "reason": ${quote(answer)}`);
  }
  return { flagged, reason };
}

function blank(payload: Record<string, unknown>, path: string): void {
  const keys = path.split('.');
  const last = keys.pop() as string;
  let container: Record<string, unknown> = payload;
  for (const key of keys) container = container[key] as Record<string, unknown>;
  container[last] = '';
}

function gatePrompt(content: string, origin: string, source: string): ChatMessage[] {
  return [
    {
      role: 'system',
      content:
        'You guard an organisation against broken access control. Given a document, where it came from (source) and ' +
        'where it is being published (origin), decide whether publishing it there would violate access control or an ' +
        'organisation invariant: for example content of a restricted, HR, legal or executive source showing up in a ' +
        'public or wider space, or personal data of others exposed to people who should not see it. Answer with only a ' +
        'JSON object, no other text: {"flagged": true or false, "reason": "<one short sentence>"}.',
    },
    { role: 'user', content: `Source: ${source}\nOrigin: ${origin}\nDocument:\n<<<\n${content}\n>>>` },
  ];
}
