import { Type } from 'typebox';
import { compactConversation } from '../../conversations/compact.js';
import type { Conversation } from '../../conversations/model.js';
import { defineAdapter } from '../adapter.js';
import { CompactConversationSchema, packageFields } from './shared.js';

const TYPE = 'conv_compact';

export const CompactBatch = Type.Object({
  ...packageFields,
  format: Type.String(),
  batch_index: Type.Integer({ minimum: 0 }),
  batch_count: Type.Integer({ minimum: 1 }),
  conversations: Type.Array(CompactConversationSchema),
  rejected: Type.Optional(Type.Array(Type.Object({ conversation_id: Type.String(), reason: Type.String() }))),
});

export const convCompact = defineAdapter({
  type: TYPE,
  group: 'conversation',
  summary: 'One text per conversation, noise dropped, with turn and token counts and a content hash.',
  description:
    'For each conversation of a conv_batch_processor batch: system and tool turns, quoted replies (`> ` lines and what ' +
    'follows an "On ... wrote:" header) and signatures (from "--", "Best regards", "Med vennlig hilsen", "Sent from my" ' +
    'on) are dropped; `text` is the remaining turns as `role: text` lines, `token_count` approximates tokens (words and ' +
    'punctuation), `content_hash` is the sha256 of `text` (equal hashes are exact duplicates). Conversations are never ' +
    'dropped here (the filters do that, so the package count holds). Emits the batch with `conversations: ' +
    '[{conversation_id, source_format, title?, channel?, started_at?, ended_at?, roles, turn_count, token_count, ' +
    'content_hash, text, turns: [{role, text, at?, bot?}]}]`. To redact identifiers before anything is stored, put ' +
    'pii_redactor next with `fields: [conversations[].text, conversations[].turns[].text, conversations[].title]`.',
  config: Type.Object({}, { additionalProperties: false }),
  input: Type.Object({
    ...packageFields,
    conversations: Type.Array(
      Type.Object({}, { description: 'normalised conversations (conv_batch_processor)' }),
    ),
  }),
  output: CompactBatch,
  create: () => async (payload) => {
    if (!Array.isArray(payload.conversations))
      throw new Error(`${TYPE}: input needs \`conversations\` (conv_batch_processor)`);
    const conversations = (payload.conversations as Conversation[]).map(compactConversation);
    return [{ payload: { ...payload, conversations } }];
  },
});
