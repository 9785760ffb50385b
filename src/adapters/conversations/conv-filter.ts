import { Type } from 'typebox';
import type { CompactConversation } from '../../conversations/compact.js';
import { turnRoles } from '../../conversations/model.js';
import { defineAdapter } from '../adapter.js';
import { ConversationMessage } from './conv-stored-keys-fanout.js';

const TYPE = 'conv_filter';

/** A dropped conversation travels on without its body, so the collector can count it. */
export function droppedMessage(
  payload: Record<string, unknown>,
  reason: string,
  extra: Record<string, unknown> = {},
) {
  const { conversation: _body, ...rest } = payload;
  return { payload: { ...rest, ...extra, dropped: true, reason } };
}

export const convFilter = defineAdapter({
  type: TYPE,
  group: 'conversation',
  summary: 'Keep conversations that meet configurable rules; forward a `dropped` marker for the rest.',
  description:
    'Rules, checked in this order, the first failing one naming the `reason`: `min_turns`, `min_tokens`, ' +
    '`required_roles` (each must have a turn), `started_after` / `started_before` (ISO dates; a conversation without ' +
    'a date passes), `include_keywords` (at least one must occur, as a word, case-insensitive), `exclude_keywords` ' +
    "(none may occur), and the redaction chain's verdicts in the envelope metadata when present: `drop_tiers` (metadata " +
    '`sensitivity.tier` from sensitivity_classifier) and `drop_quarantined` (metadata `quarantine.flagged` from ' +
    'anti_bac_gate). A kept conversation passes unchanged; a dropped one passes on as `{..., dropped: true, reason}` ' +
    'without its `conversation` body, so conv_filtered_collector still counts it. An input already dropped passes ' +
    'through untouched.',
  config: Type.Object(
    {
      min_turns: Type.Integer({ minimum: 0, default: 2, description: 'turns after compaction' }),
      min_tokens: Type.Integer({ minimum: 0, default: 0 }),
      required_roles: Type.Array(Type.Union(turnRoles.map((role) => Type.Literal(role))), {
        default: ['user'],
        description: 'roles that must each have a turn',
      }),
      started_after: Type.Optional(
        Type.String({ format: 'date-time', description: 'keep conversations started at or after' }),
      ),
      started_before: Type.Optional(
        Type.String({ format: 'date-time', description: 'keep conversations started before' }),
      ),
      include_keywords: Type.Array(Type.String({ minLength: 1 }), {
        default: [],
        description: 'empty: no requirement',
      }),
      exclude_keywords: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
      drop_tiers: Type.Array(Type.String({ minLength: 1 }), {
        default: [],
        description: 'sensitivity tiers (metadata `sensitivity.tier`) to drop',
      }),
      drop_quarantined: Type.Boolean({ default: true, description: 'drop what anti_bac_gate flagged' }),
    },
    { additionalProperties: false },
  ),
  input: ConversationMessage,
  output: ConversationMessage,
  create: (config) => {
    const include = config.include_keywords.map((keyword) => keyword.toLowerCase());
    const exclude = config.exclude_keywords.map((keyword) => keyword.toLowerCase());
    return async (payload, context) => {
      if (payload.dropped === true) return [{ payload }];
      const conversation = payload.conversation as CompactConversation | undefined;
      if (!conversation || typeof conversation.text !== 'string')
        throw new Error(`${TYPE}: input needs \`conversation\` (conv_stored_keys_fanout)`);
      const reason = firstFailingRule(conversation, context.metadata);
      return [reason ? droppedMessage(payload, reason) : { payload }];
    };

    function firstFailingRule(
      conversation: CompactConversation,
      metadata: Readonly<Record<string, unknown>>,
    ) {
      if (conversation.turn_count < config.min_turns) return 'min_turns';
      if (conversation.token_count < config.min_tokens) return 'min_tokens';
      const missing = config.required_roles.find((role) => !conversation.roles.includes(role));
      if (missing) return `required_role:${missing}`;
      const started = conversation.started_at ? Date.parse(conversation.started_at) : Number.NaN;
      if (config.started_after && started < Date.parse(config.started_after)) return 'started_after';
      if (config.started_before && started >= Date.parse(config.started_before)) return 'started_before';
      if (include.length > 0 || exclude.length > 0) {
        const words = new Set(conversation.text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}-]*/gu) ?? []);
        const has = (keyword: string) =>
          keyword.includes(' ') ? conversation.text.toLowerCase().includes(keyword) : words.has(keyword);
        if (include.length > 0 && !include.some(has)) return 'include_keywords';
        if (exclude.some(has)) return 'exclude_keywords';
      }
      const tier = (metadata.sensitivity as { tier?: unknown } | undefined)?.tier;
      if (typeof tier === 'string' && config.drop_tiers.includes(tier)) return `sensitivity:${tier}`;
      if (
        config.drop_quarantined &&
        (metadata.quarantine as { flagged?: unknown } | undefined)?.flagged === true
      )
        return 'quarantined';
      return undefined;
    }
  },
});
