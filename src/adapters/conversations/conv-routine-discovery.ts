import { Type } from 'typebox';
import {
  defaultDiscoveryOptions,
  discoverRoutine,
  type Routine,
  routineTitle,
} from '../../conversations/routines.js';
import type { LlmProvider } from '../../llm/llm.js';
import {
  askModel,
  checkLlmProfile,
  optionalLlmProvider,
  parseJsonAnswer,
  quote,
} from '../../llm/llm-step.js';
import { type AdapterContext, defineAdapter } from '../adapter.js';
import { ConversationRef, packageFields, readConversations, requireString } from './shared.js';

const TYPE = 'conv_routine_discovery';

export const RoutineSchema = Type.Object({
  cluster_id: Type.String(),
  topic: Type.String({ description: 'the catalogue label (or LLM name) of the topic' }),
  title: Type.String(),
  steps: Type.Array(Type.Object({ text: Type.String(), support: Type.Integer({ minimum: 0 }) }), {
    description: 'in order; support = conversations that include the step',
  }),
  preconditions: Type.Array(Type.String()),
  outcome: Type.Union([Type.String(), Type.Null()]),
  conversation_ids: Type.Array(Type.String(), { description: 'conversations that follow the routine' }),
  method: Type.Union([Type.Literal('sequences'), Type.Literal('llm')]),
});

export const DiscoveryResult = Type.Object({
  package_id: packageFields.package_id,
  routines: Type.Array(RoutineSchema),
});

interface Topic {
  cluster_id: string;
  label: string;
  name?: string;
  members: Array<{ conversation_id: string; storage_key: string; line: number }>;
}

export const convRoutineDiscovery = defineAdapter({
  type: TYPE,
  group: 'routines',
  summary: 'Find the recurring procedure of each catalogue topic: steps in order, preconditions, outcome.',
  description:
    'For each topic of conv_catalog (up to `max_conversations` of its conversations, most central first): offline, ' +
    'the answers\' steps (list items, "First/Then/Deretter" sentences) are grouped across conversations by shared ' +
    'terms (two phrasings of one step that never meet in one conversation and come at the same point merge too); the ' +
    'groups found in at least `min_support` of the conversations (and `min_conversations`), ordered by their usual ' +
    'position, are the steps; the recurring sentences before the first step are preconditions and after the last the ' +
    "outcome. Each text is the phrasing most conversations used, never one conversation's own words; the title is " +
    'the first and the last step (each cut to ten words), readable without a model. A topic with ' +
    'fewer than two such steps has no routine. With `llm_profile` (an `openai` profile) the model rewrites the routine ' +
    'from the offline result and sample answers, as strict JSON `{"title", "preconditions", "steps", "outcome"}`, ' +
    'validated (2 to 20 steps). Emits `{package_id, routines: [{cluster_id, topic, title, steps: [{text, support}], ' +
    'preconditions, outcome, conversation_ids, method}]}`.',
  config: Type.Object(
    {
      min_support: Type.Number({ minimum: 0, maximum: 1, default: defaultDiscoveryOptions.minSupport }),
      min_conversations: Type.Integer({ minimum: 1, default: defaultDiscoveryOptions.minConversations }),
      similarity: Type.Number({
        minimum: 0.1,
        maximum: 1,
        default: defaultDiscoveryOptions.similarity,
        description: 'term Jaccard at which two phrasings are one step',
      }),
      max_conversations: Type.Integer({
        minimum: 3,
        maximum: 20_000,
        default: 500,
        description: 'per topic',
      }),
      llm_profile: Type.Optional(
        Type.String({ minLength: 1, description: 'an openai profile: routines written by the model' }),
      ),
      content_cutoff: Type.Integer({
        minimum: 100,
        maximum: 200_000,
        default: 6000,
        description: 'characters of sample answers sent',
      }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({
    package_id: packageFields.package_id,
    topics: Type.Array(
      Type.Object({ cluster_id: Type.String(), label: Type.String(), members: Type.Array(ConversationRef) }),
    ),
  }),
  output: DiscoveryResult,
  checkSettings: checkLlmProfile,
  create: (config, resources) => {
    const provider = optionalLlmProvider(resources.settings, config.llm_profile, TYPE);
    return async (payload, context) => {
      const packageId = requireString(payload, 'package_id', TYPE);
      if (!Array.isArray(payload.topics)) throw new Error(`${TYPE}: input needs \`topics\` (conv_catalog)`);
      const routines = [];
      for (const topic of payload.topics as Topic[]) {
        const members = topic.members.slice(0, config.max_conversations);
        const conversations = await readConversations(resources.storage, members);
        const found = discoverRoutine(
          conversations.map((conversation) => ({
            conversation_id: conversation.conversation_id,
            turns: conversation.turns,
          })),
          {
            minSupport: config.min_support,
            minConversations: config.min_conversations,
            similarity: config.similarity,
          },
        );
        const topicName = topic.name ?? topic.label;
        if (provider) {
          const answers = conversations.slice(0, 5).map((conversation) =>
            conversation.turns
              .filter((turn) => turn.role !== 'user')
              .map((turn) => turn.text)
              .join('\n'),
          );
          const written = await writeWithModel(provider, topicName, found, answers, context);
          routines.push({
            cluster_id: topic.cluster_id,
            topic: topicName,
            ...written,
            conversation_ids: found?.conversation_ids ?? members.map((member) => member.conversation_id),
            method: 'llm',
          });
        } else if (found) {
          routines.push({
            cluster_id: topic.cluster_id,
            topic: topicName,
            title: routineTitle(found.steps),
            ...found,
            method: 'sequences',
          });
        }
      }
      return [{ payload: { package_id: packageId, routines } }];
    };

    async function writeWithModel(
      model: LlmProvider,
      topic: string,
      found: Routine | null,
      answers: readonly string[],
      context: AdapterContext,
    ) {
      const answer = await askModel(
        model,
        [
          {
            role: 'system',
            content:
              'You write down the recurring procedure support staff follow for one topic. Answer with one JSON object ' +
              '{"title": "<how to ...>", "preconditions": ["..."], "steps": ["...", "..."], "outcome": "<what the user ' +
              'has at the end>"} and nothing else, in the language of the answers. Steps are short imperative ' +
              'sentences in order. Never include names, e-mail addresses, ticket numbers or other details of one conversation.',
          },
          {
            role: 'user',
            content: `Topic: ${topic}\n\nSteps found in the conversations: ${JSON.stringify(found?.steps.map((step) => step.text) ?? [])}\n\nSample answers:\n${answers.join('\n---\n').slice(0, config.content_cutoff)}`,
          },
        ],
        TYPE,
        context.signal,
      );
      const parsed = parseJsonAnswer(answer, TYPE);
      const strings = (value: unknown) =>
        Array.isArray(value) &&
        value.every((item) => typeof item === 'string' && item.trim() !== '' && item.length <= 400)
          ? (value as string[]).map((item) => item.trim())
          : undefined;
      const steps = strings(parsed.steps);
      const preconditions = strings(parsed.preconditions ?? []);
      const title = typeof parsed.title === 'string' ? parsed.title.trim() : '';
      const outcome =
        parsed.outcome === null || typeof parsed.outcome === 'string'
          ? (parsed.outcome as string | null)
          : undefined;
      if (
        !steps ||
        steps.length < 2 ||
        steps.length > 20 ||
        !preconditions ||
        !title ||
        outcome === undefined
      )
        throw new Error(
          `${TYPE}: the model's routine needs a "title", 2 to 20 "steps", "preconditions" and an "outcome": ${quote(answer)}`,
        );
      const support = found?.conversation_ids.length ?? 0;
      return { title, steps: steps.map((text) => ({ text, support })), preconditions, outcome };
    }
  },
});
