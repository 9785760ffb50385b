import { Type } from 'typebox';
import type { CompactConversation } from '../../conversations/compact.js';
import { defineAdapter } from '../adapter.js';
import { packageFields, requireCount, requireString } from './shared.js';

const TYPE = 'conv_storage_writer';

export const StoredBatch = Type.Object({
  ...packageFields,
  batch_index: Type.Integer({ minimum: 0 }),
  batch_count: Type.Integer({ minimum: 1 }),
  storage_key: Type.String({ description: 'the JSONL object: one compact conversation per line' }),
  conversation_ids: Type.Array(Type.String(), { description: 'in line order' }),
});

export const convStorageWriter = defineAdapter({
  type: TYPE,
  group: 'conversation',
  summary: 'Store a batch of compacted conversations as one JSONL object.',
  description:
    'Writes the conversations of a conv_compact batch (after pii_redactor, when the pipeline redacts) as one JSONL ' +
    'object, one conversation per line, at `conversations/<package_id>/<batch_index>.jsonl` under the stage prefix (a ' +
    'retried message rewrites the same object). One object per batch rather than per conversation keeps a 50,000-' +
    'conversation export at a few hundred objects; a conversation is addressed as `{storage_key, line}` from here on. ' +
    'Emits `{package_id, package_total, batch_index, batch_count, storage_key, conversation_ids}`.',
  config: Type.Object({}, { additionalProperties: false }),
  input: Type.Object({
    ...packageFields,
    batch_index: Type.Integer({ minimum: 0 }),
    batch_count: Type.Integer({ minimum: 1 }),
    conversations: Type.Array(Type.Object({}, { description: 'compact conversations (conv_compact)' })),
  }),
  output: StoredBatch,
  create: () => async (payload, context) => {
    const packageId = requireString(payload, 'package_id', TYPE);
    const batchIndex = requireCount(payload, 'batch_index', TYPE);
    if (!Array.isArray(payload.conversations))
      throw new Error(`${TYPE}: input needs \`conversations\` (conv_compact)`);
    const conversations = payload.conversations as CompactConversation[];
    if (conversations.some((conversation) => typeof conversation.content_hash !== 'string'))
      throw new Error(`${TYPE}: the conversations are not compacted; put conv_compact before this step`);
    const stored = await context.writeObject(
      `conversations/${packageId}/${batchIndex}.jsonl`,
      conversations.map((conversation) => JSON.stringify(conversation)).join('\n'),
      {
        contentType: 'application/x-ndjson',
        metadata: { package_id: packageId, batch_index: batchIndex, count: conversations.length },
      },
    );
    return [
      {
        payload: {
          package_id: packageId,
          package_total: requireCount(payload, 'package_total', TYPE),
          batch_index: batchIndex,
          batch_count: requireCount(payload, 'batch_count', TYPE),
          storage_key: stored.key,
          conversation_ids: conversations.map((conversation) => conversation.conversation_id),
        },
      },
    ];
  },
});
