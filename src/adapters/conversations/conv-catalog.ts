import { Type } from 'typebox';
import { clusterKeywords } from '../../conversations/keywords.js';
import type { LlmProvider } from '../../llm/llm.js';
import {
  askModel,
  checkLlmProfile,
  optionalLlmProvider,
  parseJsonAnswer,
  quote,
} from '../../llm/llm-step.js';
import { identifierKinds, redactIdentifiers } from '../../redaction/identifiers.js';
import { type AdapterContext, defineAdapter } from '../adapter.js';
import { ConversationRef, packageFields, readConversations, requireString } from './shared.js';

const TYPE = 'conv_catalog';

export const CatalogTopic = Type.Object({
  cluster_id: Type.String(),
  label: Type.String({ description: 'the top keywords joined, or the LLM name' }),
  name: Type.Optional(Type.String({ description: 'LLM profile only' })),
  description: Type.Optional(Type.String({ description: 'LLM profile only' })),
  keywords: Type.Array(Type.Object({ term: Type.String(), weight: Type.Number() })),
  size: Type.Integer({ minimum: 1 }),
  share: Type.Number({ description: 'of the published conversations' }),
  representatives: Type.Array(Type.String(), { description: 'ids of the most central conversations' }),
  trend: Type.Array(Type.Object({ period: Type.String(), count: Type.Integer() }), {
    description: 'conversations per period',
  }),
  members: Type.Array(ConversationRef, {
    description: 'for the routine stages; left out of the stored catalogue',
  }),
});

export const CatalogResult = Type.Object({
  package_id: packageFields.package_id,
  conversation_count: Type.Integer({ minimum: 0, description: 'unique conversations clustered' }),
  published_count: Type.Integer({ minimum: 0 }),
  unpublished: Type.Object({
    clusters: Type.Integer({ minimum: 0, description: 'clusters under min_cluster_size' }),
    conversations: Type.Integer({ minimum: 0, description: 'their conversations and the noise' }),
  }),
  labelled_by: Type.Union([Type.Literal('c-tf-idf'), Type.Literal('llm')]),
  topics: Type.Array(CatalogTopic),
});

interface Member {
  conversation_id: string;
  storage_key: string;
  line: number;
  started_at?: string;
}

export const convCatalog = defineAdapter({
  type: TYPE,
  group: 'conversation',
  summary: 'A catalogue of topics: labels, sizes, representative conversations and a trend over time.',
  description:
    'For each cluster of conv_clustering with at least `min_cluster_size` conversations (smaller clusters and noise are ' +
    'never published, only counted, so no single conversation can be read back out of the catalogue): keywords by ' +
    "class-based TF-IDF over the clusters (a term must occur in at least `min_keyword_documents` of the cluster's " +
    "conversations, so one conversation's name or ticket number never becomes a label), the size and share, the " +
    '`representatives` most central conversation ids, and the count per `trend_period` (month or ISO week) from ' +
    '`started_at`. With `llm_profile` (an `openai` profile) each topic also gets a `name` and `description` from the ' +
    'model (strict JSON `{"name", "description"}`, validated; it sees the keywords and the first `content_cutoff` ' +
    'characters of the representatives). Emits `{package_id, conversation_count, published_count, unpublished: ' +
    '{clusters, conversations}, labelled_by, topics: [{cluster_id, label, name?, description?, keywords, size, share, ' +
    'representatives, trend, members}]}`, largest topic first.',
  config: Type.Object(
    {
      min_cluster_size: Type.Integer({
        minimum: 1,
        default: 5,
        description: 'smaller clusters are not published',
      }),
      keywords: Type.Integer({ minimum: 1, maximum: 50, default: 8, description: 'keywords per topic' }),
      min_keyword_documents: Type.Integer({
        minimum: 1,
        default: 3,
        description: 'conversations of the topic a keyword must occur in',
      }),
      representatives: Type.Integer({ minimum: 0, maximum: 20, default: 3 }),
      trend_period: Type.Union([Type.Literal('month'), Type.Literal('week')], { default: 'month' }),
      llm_profile: Type.Optional(
        Type.String({ minLength: 1, description: 'an openai profile: topic names and descriptions' }),
      ),
      content_cutoff: Type.Integer({
        minimum: 100,
        maximum: 200_000,
        default: 4000,
        description: 'characters of the representatives sent to the model',
      }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({
    package_id: packageFields.package_id,
    clusters: Type.Array(Type.Object({ cluster_id: Type.String(), members: Type.Array(ConversationRef) })),
    noise: Type.Optional(Type.Array(ConversationRef)),
  }),
  output: CatalogResult,
  checkSettings: checkLlmProfile,
  create: (config, resources) => {
    const provider = optionalLlmProvider(resources.settings, config.llm_profile, TYPE);
    return async (payload, context) => {
      const packageId = requireString(payload, 'package_id', TYPE);
      if (!Array.isArray(payload.clusters))
        throw new Error(`${TYPE}: input needs \`clusters\` (conv_clustering)`);
      const clusters = payload.clusters as Array<{ cluster_id: string; members: Member[] }>;
      const noise = Array.isArray(payload.noise) ? payload.noise.length : 0;
      const published = clusters.filter((cluster) => cluster.members.length >= config.min_cluster_size);
      const unpublished = clusters.filter((cluster) => cluster.members.length < config.min_cluster_size);
      const texts = await Promise.all(
        clusters.map(async (cluster) =>
          (await readConversations(resources.storage, cluster.members)).map(
            (conversation) => conversation.text,
          ),
        ),
      );
      // Keywords weigh each cluster against all of them, the unpublished ones included.
      const keywords = clusterKeywords(texts, {
        top: config.keywords,
        minDocuments: config.min_keyword_documents,
      });
      const publishedCount = published.reduce((sum, cluster) => sum + cluster.members.length, 0);
      const topics = [];
      for (const cluster of published) {
        const index = clusters.indexOf(cluster);
        const topicKeywords = keywords[index] ?? [];
        const representatives = cluster.members.slice(0, config.representatives);
        const topic: Record<string, unknown> = {
          cluster_id: cluster.cluster_id,
          label:
            topicKeywords
              .slice(0, 3)
              .map((keyword) => keyword.term)
              .join(', ') || cluster.cluster_id,
          keywords: topicKeywords,
          size: cluster.members.length,
          share: Math.round((cluster.members.length / Math.max(1, publishedCount)) * 10_000) / 10_000,
          representatives: representatives.map((member) => member.conversation_id),
          trend: trendOf(cluster.members, config.trend_period),
          members: cluster.members.map(({ conversation_id, storage_key, line }) => ({
            conversation_id,
            storage_key,
            line,
          })),
        };
        if (provider) {
          const named = await nameTopic(
            provider,
            topicKeywords,
            (texts[index] ?? []).slice(0, config.representatives),
            context,
          );
          Object.assign(topic, named, { label: named.name });
        }
        topics.push(topic);
      }
      return [
        {
          payload: {
            package_id: packageId,
            conversation_count: clusters.reduce((sum, cluster) => sum + cluster.members.length, 0) + noise,
            published_count: publishedCount,
            unpublished: {
              clusters: unpublished.length,
              conversations: unpublished.reduce((sum, cluster) => sum + cluster.members.length, 0) + noise,
            },
            labelled_by: provider ? 'llm' : 'c-tf-idf',
            topics,
          },
        },
      ];
    };

    async function nameTopic(
      model: LlmProvider,
      topicKeywords: ReadonlyArray<{ term: string }>,
      samples: readonly string[],
      context: AdapterContext,
    ): Promise<{ name: string; description: string }> {
      const excerpt = samples.join('\n---\n').slice(0, config.content_cutoff);
      const answer = await askModel(
        model,
        [
          {
            role: 'system',
            content:
              'You name topics of support conversations for a catalogue. Answer with one JSON object ' +
              '{"name": "<3 to 6 words>", "description": "<one sentence>"} and nothing else. Write in the language of ' +
              'the conversations. Never include names, e-mail addresses, numbers or other details of one conversation.',
          },
          {
            role: 'user',
            content: `Keywords: ${topicKeywords.map((keyword) => keyword.term).join(', ')}\n\nConversations:\n${excerpt}`,
          },
        ],
        TYPE,
        context.signal,
      );
      const parsed = parseJsonAnswer(answer, TYPE);
      const name = typeof parsed.name === 'string' ? parsed.name.trim() : '';
      const description = typeof parsed.description === 'string' ? parsed.description.trim() : '';
      if (!name || name.length > 120 || !description || description.length > 600)
        throw new Error(
          `${TYPE}: the model's answer needs a short "name" and a "description": ${quote(answer)}`,
        );
      // A model that ignored its instructions still cannot put an identifier in the catalogue.
      const clean = (text: string) => redactIdentifiers(text, identifierKinds, '[REDACTED:{kind}]').text;
      return { name: clean(name), description: clean(description) };
    }
  },
});

/** Conversations per month (`2025-03`) or ISO week (`2025-W09`), oldest first. */
export function trendOf(members: ReadonlyArray<{ started_at?: string }>, period: 'month' | 'week') {
  const counts = new Map<string, number>();
  for (const member of members) {
    if (!member.started_at) continue;
    const date = new Date(member.started_at);
    if (Number.isNaN(date.getTime())) continue;
    const key = period === 'month' ? member.started_at.slice(0, 7) : isoWeek(date);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([key, count]) => ({ period: key, count }));
}

function isoWeek(date: Date): string {
  const day = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()));
  const weekday = day.getUTCDay() || 7;
  day.setUTCDate(day.getUTCDate() + 4 - weekday);
  const yearStart = Date.UTC(day.getUTCFullYear(), 0, 1);
  const week = Math.ceil(((day.getTime() - yearStart) / 86_400_000 + 1) / 7);
  return `${day.getUTCFullYear()}-W${String(week).padStart(2, '0')}`;
}
