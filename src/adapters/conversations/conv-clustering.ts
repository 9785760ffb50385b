import { Type } from 'typebox';
import { clusterVectors, defaultClusteringOptions } from '../../conversations/clustering.js';
import { defineAdapter } from '../adapter.js';
import {
  ConversationRef,
  packageFields,
  readConversations,
  referencesOf,
  requireString,
  shortHash,
} from './shared.js';

const TYPE = 'conv_clustering';

export const ClusterMember = Type.Object({
  ...ConversationRef.properties,
  started_at: Type.Optional(Type.String()),
  similarity: Type.Number({ description: 'cosine similarity to the cluster centre' }),
});

export const ClusteringResult = Type.Object({
  package_id: packageFields.package_id,
  model: Type.String({ description: 'the embedding model' }),
  k: Type.Integer({ minimum: 0 }),
  silhouette: Type.Number({ description: 'mean silhouette of the chosen k on the sample' }),
  clusters: Type.Array(
    Type.Object({
      cluster_id: Type.String({ description: 'stable: a hash of the sorted member ids' }),
      size: Type.Integer({ minimum: 1 }),
      members: Type.Array(ClusterMember, { description: 'most central first' }),
    }),
  ),
  noise: Type.Array(ConversationRef, { description: 'conversations too far from every centre' }),
});

export const convClustering = defineAdapter({
  type: TYPE,
  group: 'conversation',
  summary: "Cluster a package's unique conversations by topic, on embeddings from the configured embedder.",
  description:
    'Embeds the text of each unique conversation (conv_deduplicate) with `model` (an `embedding_models` name; the ' +
    'default model when absent, the offline `hash` embedder on a fresh install) and clusters the unit vectors with ' +
    'spherical k-means: k is chosen by the data, the k in `min_k`..`max_k` with the best mean silhouette on a sample of ' +
    '`sample_size`, then k-means runs on all of them. A conversation whose cosine similarity to its centre is under ' +
    '`min_similarity` is noise (not forced into a topic). Seeded: the same input gives the same clusters and ids. ' +
    'Emits `{package_id, model, k, silhouette, clusters: [{cluster_id, size, members: [{conversation_id, storage_key, ' +
    'line, started_at?, similarity}]}], noise}`.',
  config: Type.Object(
    {
      model: Type.Optional(
        Type.String({ minLength: 1, description: 'embedding model name; the default model when absent' }),
      ),
      text: Type.Union([Type.Literal('all'), Type.Literal('user')], {
        default: 'all',
        description: 'embed all turns, or only what the users wrote',
      }),
      max_characters: Type.Integer({
        minimum: 100,
        maximum: 100_000,
        default: 4000,
        description: 'of each text embedded',
      }),
      min_k: Type.Integer({ minimum: 2, maximum: 200, default: defaultClusteringOptions.minK }),
      max_k: Type.Integer({ minimum: 2, maximum: 200, default: defaultClusteringOptions.maxK }),
      sample_size: Type.Integer({ minimum: 50, maximum: 5000, default: defaultClusteringOptions.sampleSize }),
      min_similarity: Type.Number({
        minimum: 0,
        maximum: 1,
        default: defaultClusteringOptions.minSimilarity,
      }),
      seed: Type.Integer({ default: defaultClusteringOptions.seed }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({ package_id: packageFields.package_id, unique: Type.Array(ConversationRef) }),
  output: ClusteringResult,
  checkSettings: (config, settings) =>
    config.model !== undefined && !settings.embedding_models.some((model) => model.name === config.model)
      ? [
          {
            code: 'E212',
            field: ['model'],
            message: `embedding model ${config.model} is not configured (${settings.embedding_models.map((model) => model.name).join(', ')})`,
            remediation:
              'Name a model of the embedding_models setting, or leave `model` out for the default.',
          },
        ]
      : [],
  create: (config, resources) => async (payload, context) => {
    const packageId = requireString(payload, 'package_id', TYPE);
    const references = referencesOf(payload.unique, 'unique', TYPE);
    const modelName = config.model ?? resources.embedders.defaultModel;
    const embedder = resources.embedders.get(modelName);
    if (!embedder) throw new Error(`${TYPE}: embedding model ${modelName} is not configured`);
    const conversations = await readConversations(resources.storage, references);
    const texts = conversations.map((conversation) =>
      (config.text === 'user'
        ? conversation.turns
            .filter((turn) => turn.role === 'user')
            .map((turn) => turn.text)
            .join('\n')
        : conversation.text
      ).slice(0, config.max_characters),
    );
    const vectors: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += embedder.maxBatchSize)
      vectors.push(
        ...(await embedder.embed(texts.slice(start, start + embedder.maxBatchSize), context.signal)),
      );
    const result = clusterVectors(vectors, {
      minK: config.min_k,
      maxK: Math.max(config.min_k, config.max_k),
      sampleSize: config.sample_size,
      minSimilarity: config.min_similarity,
      iterations: defaultClusteringOptions.iterations,
      seed: config.seed,
    });
    const clusters = Array.from({ length: result.k }, (_, label) =>
      references
        .map((reference, index) => ({
          ...reference,
          ...(conversations[index]?.started_at ? { started_at: conversations[index]?.started_at } : {}),
          similarity: Math.round((result.similarity[index] ?? 0) * 10_000) / 10_000,
          label: result.labels[index],
        }))
        .filter((member) => member.label === label)
        .map(({ label: _label, ...member }) => member)
        .sort((a, b) => b.similarity - a.similarity || (a.conversation_id < b.conversation_id ? -1 : 1)),
    )
      .filter((members) => members.length > 0)
      .map((members) => ({
        cluster_id: `cluster-${shortHash(
          members
            .map((member) => member.conversation_id)
            .sort()
            .join('\n'),
          12,
        )}`,
        size: members.length,
        members,
      }))
      .sort((a, b) => b.size - a.size || (a.cluster_id < b.cluster_id ? -1 : 1));
    const noise = references.filter((_, index) => result.labels[index] === -1);
    return [
      {
        payload: {
          package_id: packageId,
          model: modelName,
          k: clusters.length,
          silhouette: Math.round(result.silhouette * 10_000) / 10_000,
          clusters,
          noise,
        },
      },
    ];
  },
});
