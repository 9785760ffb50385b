import { Type } from 'typebox';
import {
  contentHashOf,
  extractiveDefaults,
  extractiveDraft,
  type PageDraft,
  renderPage,
} from '../../consolidation/concept-page.js';
import { type ConceptToWrite, writePagesWithModel } from '../../consolidation/llm-pages.js';
import { checkLlmProfile, optionalLlmProvider } from '../../llm/llm-step.js';
import { publicBaseUrl } from '../../storage/object-links.js';
import { type AdapterOutput, defineAdapter } from '../adapter.js';
import {
  type ConceptPayload,
  conceptFlowFields,
  conceptPayloadOf,
  PassageSchema,
  pageFlowFields,
} from './knowledge-flow.js';

export const batchSynthesizer = defineAdapter({
  type: 'batch_synthesizer',
  group: 'knowledge',
  summary: "Write each concept's page in markdown from its passages, a numbered citation after each claim.",
  description:
    'Input: concept_source_loader messages, best in batches (`batch:`). Offline (no `llm_profile`) the page is ' +
    'extractive: the sentence that defines the concept as summary, then up to `max_points` key sentences taken in ' +
    'turns from the passages, each quoted with its citation `[n]`; then "Related concepts" (links `[Name](slug.md)`) ' +
    'and "Sources" (the cited passages). With `llm_profile` the model writes `concepts_per_call` concepts per call ' +
    'as strict JSON (summary, sections, paragraphs with the passage numbers they rest on), checked against a schema ' +
    'and against the passages given; a concept the answer leaves out or cites wrongly is written extractively ' +
    'instead (`synthesized_by` says which). Emits the input with `page: {markdown, content_hash, synthesized_by}`; a ' +
    'concept with no passage gets no page (`page` absent) and a `removed` message passes through.',
  config: Type.Object(
    {
      llm_profile: Type.Optional(
        Type.String({ minLength: 1, description: 'an openai profile: the model writes the pages' }),
      ),
      concepts_per_call: Type.Integer({
        minimum: 1,
        maximum: 20,
        default: 4,
        description: 'concepts in one model call',
      }),
      max_points: Type.Integer({ minimum: 1, maximum: 30, default: extractiveDefaults.maxPoints }),
      max_sentence_characters: Type.Integer({
        minimum: 50,
        maximum: 5000,
        default: extractiveDefaults.maxSentenceCharacters,
      }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({ ...conceptFlowFields, passages: Type.Optional(Type.Array(PassageSchema)) }),
  output: Type.Object(pageFlowFields),
  batch: true,
  checkSettings: checkLlmProfile,
  create: (config, resources) => {
    const provider = optionalLlmProvider(resources.settings, config.llm_profile, 'batch_synthesizer');
    const linkBase = publicBaseUrl(resources.settings);

    async function synthesize(messages: ConceptPayload[], signal: AbortSignal): Promise<ConceptPayload[]> {
      const toWrite: ConceptToWrite[] = [];
      for (const message of messages)
        if (message.concept && (message.passages?.length ?? 0) > 0)
          toWrite.push({
            slug: message.concept.slug,
            name: message.concept.name,
            aliases: message.concept.aliases,
            passages: message.passages ?? [],
            related: message.concept.related,
          });
      const drafts = new Map<string, { draft: PageDraft; by: string }>();
      if (provider)
        for (let start = 0; start < toWrite.length; start += config.concepts_per_call) {
          const chunk = toWrite.slice(start, start + config.concepts_per_call);
          const written = await writePagesWithModel(provider, chunk, signal);
          for (const [slug, draft] of written.drafts)
            drafts.set(slug, { draft, by: `llm:${provider.profile}` });
        }
      for (const concept of toWrite) {
        if (drafts.has(concept.slug)) continue;
        const draft = extractiveDraft(concept, concept.passages, concept.related, {
          maxPoints: config.max_points,
          maxSentenceCharacters: config.max_sentence_characters,
        });
        if (draft)
          drafts.set(concept.slug, {
            draft,
            by: provider ? 'extractive (model answer refused)' : 'extractive',
          });
      }
      return messages.map((message) => {
        const written = message.concept ? drafts.get(message.concept.slug) : undefined;
        if (!written) return message;
        const markdown = renderPage(written.draft, message.passages ?? [], linkBase);
        return {
          ...message,
          page: { markdown, content_hash: contentHashOf(markdown), synthesized_by: written.by },
        };
      });
    }

    return async (payload, context): Promise<AdapterOutput[]> => {
      if (Array.isArray(payload.messages)) {
        const messages = (payload.messages as { payload: Record<string, unknown> }[]).map((message) =>
          conceptPayloadOf(message.payload, 'batch_synthesizer'),
        );
        const written = await synthesize(messages, context.signal);
        return written.map((message, batchIndex) => ({
          payload: message as unknown as Record<string, unknown>,
          batchIndex,
        }));
      }
      const [written] = await synthesize([conceptPayloadOf(payload, 'batch_synthesizer')], context.signal);
      return [{ payload: written as unknown as Record<string, unknown> }];
    };
  },
});
