import { Type } from 'typebox';
import type { CompactConversation } from '../../conversations/compact.js';
import { defineAdapter } from '../adapter.js';
import { CompactConversationSchema, packageFields, requireCount, requireString, routed } from './shared.js';

const TYPE = 'conv_stored_keys_fanout';

export const ConversationMessage = Type.Object({
  ...packageFields,
  conversation_id: Type.String(),
  storage_key: Type.String(),
  line: Type.Integer({ minimum: 0 }),
  conversation: Type.Optional(
    Type.Omit(CompactConversationSchema, ['turns'], {
      description: 'the compact conversation without `turns` (`text` has them as `role: text` lines)',
    }),
  ),
  dropped: Type.Boolean({
    description: 'true once a filter dropped it; the message still travels to the collector',
  }),
  reason: Type.Optional(Type.String({ description: 'why it was dropped, e.g. `min_turns`, `language:da`' })),
  language: Type.Optional(
    Type.Object(
      { verdict: Type.String(), language: Type.Optional(Type.String()), margin: Type.Number() },
      { description: 'set by conv_norwegian_filter' },
    ),
  ),
});

export const convStoredKeysFanout = defineAdapter({
  type: TYPE,
  group: 'conversation',
  summary: 'One message per stored conversation, stamped with its package and the package total (fan-out).',
  description:
    'Reads the JSONL object conv_storage_writer wrote and emits, per line, `{package_id, package_total, ' +
    'conversation_id, storage_key, line, conversation, dropped: false}`: the compact conversation travels inline ' +
    'without its `turns` (its `text` has them as `role: text` lines; the engine moves a body over 16 KB to storage by ' +
    'itself), so the filters need no storage reads and the per-conversation messages stay small. `package_total` is ' +
    'what conv_filtered_collector counts arrivals against.',
  config: Type.Object({}, { additionalProperties: false }),
  input: Type.Object({ ...packageFields, storage_key: Type.String() }),
  output: ConversationMessage,
  fanOut: true,
  create: (_config, resources) => async (payload, context) => {
    const storageKey = requireString(payload, 'storage_key', TYPE);
    const packageId = requireString(payload, 'package_id', TYPE);
    const total = requireCount(payload, 'package_total', TYPE);
    const lines = (await resources.storage.get(storageKey)).toString('utf8').split('\n');
    return lines.flatMap((line, index) => {
      if (line.trim() === '') return [];
      // Without its turns, as the schema says: `text` holds them, and a message per
      // conversation carrying both doubled its size.
      const { turns: _turns, ...conversation } = JSON.parse(line) as CompactConversation;
      return [
        routed(context, {
          package_id: packageId,
          package_total: total,
          conversation_id: conversation.conversation_id,
          storage_key: storageKey,
          line: index,
          conversation,
          dropped: false,
        }),
      ];
    });
  },
});
