import { Type } from 'typebox';
import { defaultDedupOptions, findDuplicates } from '../../conversations/minhash.js';
import { defineAdapter } from '../adapter.js';
import { ConversationRef, packageFields, readConversations, referencesOf, requireString } from './shared.js';

const TYPE = 'conv_deduplicate';

export const DedupResult = Type.Object({
  package_id: packageFields.package_id,
  conversation_count: Type.Integer({ minimum: 0 }),
  unique_count: Type.Integer({ minimum: 0 }),
  duplicate_count: Type.Integer({ minimum: 0 }),
  threshold: Type.Number(),
  groups: Type.Array(
    Type.Object({
      canonical: Type.String({ description: 'the conversation kept: the first of the group by id' }),
      duplicates: Type.Array(
        Type.Object({
          id: Type.String(),
          similarity: Type.Number({ description: 'shingle Jaccard with its closest group member' }),
          exact: Type.Boolean({ description: 'same content hash' }),
        }),
      ),
    }),
  ),
  unique: Type.Array(ConversationRef, {
    description: 'one conversation per group, and every one in no group',
  }),
});

export const convDeduplicate = defineAdapter({
  type: TYPE,
  group: 'conversation',
  summary: 'Find exact and near-duplicate conversations (MinHash with LSH, confirmed by Jaccard).',
  description:
    'Reads the kept conversations of a package (conv_filtered_collector) and compares their texts as sets of ' +
    '`shingle_words`-word shingles: equal content hashes are exact duplicates; MinHash signatures (`permutations` ' +
    'hash functions) in `bands` LSH bands find candidate pairs without comparing every pair, and a candidate is a ' +
    'duplicate when the exact Jaccard similarity of the two shingle sets is at least `threshold`. Groups are closed ' +
    'transitively; the first conversation of a group (by id) is kept. Emits `{package_id, conversation_count, ' +
    'unique_count, duplicate_count, threshold, groups: [{canonical, duplicates: [{id, similarity, exact}]}], unique: ' +
    '[{conversation_id, storage_key, line}]}`.',
  config: Type.Object(
    {
      threshold: Type.Number({
        minimum: 0.1,
        maximum: 1,
        default: defaultDedupOptions.threshold,
        description: 'Jaccard similarity of shingle sets',
      }),
      shingle_words: Type.Integer({ minimum: 1, maximum: 10, default: defaultDedupOptions.shingleWords }),
      permutations: Type.Integer({ minimum: 16, maximum: 512, default: defaultDedupOptions.permutations }),
      bands: Type.Integer({
        minimum: 1,
        maximum: 512,
        default: defaultDedupOptions.bands,
        description: 'must divide permutations',
      }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({ package_id: packageFields.package_id, kept: Type.Array(ConversationRef) }),
  output: DedupResult,
  create: (config, resources) => {
    if (config.permutations % config.bands !== 0)
      throw new Error(`${TYPE}: bands (${config.bands}) must divide permutations (${config.permutations})`);
    return async (payload) => {
      const packageId = requireString(payload, 'package_id', TYPE);
      const references = referencesOf(payload.kept, 'kept', TYPE).sort((a, b) =>
        a.conversation_id < b.conversation_id ? -1 : a.conversation_id > b.conversation_id ? 1 : 0,
      );
      const conversations = await readConversations(resources.storage, references);
      const groups = findDuplicates(
        conversations.map((conversation) => ({
          id: conversation.conversation_id,
          text: conversation.text,
          content_hash: conversation.content_hash,
        })),
        {
          threshold: config.threshold,
          shingleWords: config.shingle_words,
          permutations: config.permutations,
          bands: config.bands,
        },
      );
      const duplicates = new Set(
        groups.flatMap((group) => group.duplicates.map((duplicate) => duplicate.id)),
      );
      const unique = references.filter((reference) => !duplicates.has(reference.conversation_id));
      return [
        {
          payload: {
            package_id: packageId,
            conversation_count: references.length,
            unique_count: unique.length,
            duplicate_count: duplicates.size,
            threshold: config.threshold,
            groups,
            unique,
          },
        },
      ];
    };
  },
});
