/**
 * The one shape every chat export is normalised into (conv_batch_processor), and what the
 * later conversation stages add to it. Pure data: no storage, no engine.
 */

export const conversationFormats = ['chatgpt', 'slack', 'teams', 'jsonl'] as const;
export type ConversationFormat = (typeof conversationFormats)[number];

/**
 * Who wrote a turn. `user` asked (the person the conversation is about), `assistant` is a
 * model or bot, `agent` a human answering (support staff), `system` the platform itself.
 */
export const turnRoles = ['user', 'assistant', 'agent', 'system', 'tool'] as const;
export type TurnRole = (typeof turnRoles)[number];

export interface Turn {
  role: TurnRole;
  text: string;
  /** ISO 8601, when the export says. */
  at?: string;
  /** The bot or integration that wrote an `assistant` turn in a team chat (Slack `bot_message`, Teams app). */
  bot?: string;
}

export interface Conversation {
  /** Stable id from the export (ChatGPT id, Slack channel + thread, Teams chat + thread, JSONL id). */
  conversation_id: string;
  source_format: ConversationFormat;
  title?: string;
  /** Slack or Teams channel the conversation happened in. */
  channel?: string;
  started_at?: string;
  turns: Turn[];
}

/** One conversation of an export, or why it could not be read. */
export type ParsedItem =
  | { conversation: Conversation }
  | { rejected: { conversation_id: string; reason: string } };

/** Thrown when a whole export cannot be read on (truncated JSON, invalid UTF-8 inside JSON). */
export class ExportError extends Error {
  override name = 'ExportError';
  /** No retry repairs the file. */
  readonly permanent = true;
}

/** Limits every parser applies to each conversation. */
export interface ParseLimits {
  /** A turn longer than this rejects its conversation (a 100 MB pasted log is not a chat). */
  maxTurnCharacters: number;
  /**
   * Messages of one conversation (ChatGPT mapping nodes, Slack and Teams messages, JSONL
   * turns); past it, that conversation is rejected and the others go on.
   */
  maxMessagesPerConversation: number;
  /**
   * JSON values and characters one conversation (a ChatGPT array element) or one message
   * (Slack, Teams) may have; past either it is dropped while it is read, before it is built.
   */
  maxItemValues: number;
  maxItemCharacters: number;
}

export const defaultParseLimits: ParseLimits = {
  maxTurnCharacters: 200_000,
  maxMessagesPerConversation: 50_000,
  maxItemValues: 1_000_000,
  maxItemCharacters: 64 * 1024 * 1024,
};

/** The refusal of a conversation over a limit, naming it and the limit. */
export function overLimit(conversationId: string, reason: string): ParsedItem {
  return { rejected: { conversation_id: conversationId, reason: `over the parse limits: ${reason}` } };
}

/** The item for `conversation`, rejected when one of its turns is over the limit. */
export function checkedItem(conversation: Conversation, limits: ParseLimits): ParsedItem {
  const index = conversation.turns.findIndex((turn) => turn.text.length > limits.maxTurnCharacters);
  if (index < 0) return { conversation };
  const length = conversation.turns[index]?.text.length ?? 0;
  return {
    rejected: {
      conversation_id: conversation.conversation_id,
      reason: `turn ${index + 1} has ${length} characters, over the limit of ${limits.maxTurnCharacters}`,
    },
  };
}

/** An ISO timestamp from epoch seconds (ChatGPT, Slack `ts`) or a date string; undefined when neither. */
export function isoTime(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return new Date(value * 1000).toISOString();
  if (typeof value === 'string' && value !== '') {
    const asNumber = Number(value);
    if (Number.isFinite(asNumber) && /^\d+(\.\d+)?$/.test(value))
      return new Date(asNumber * 1000).toISOString();
    const parsed = Date.parse(value);
    if (Number.isFinite(parsed)) return new Date(parsed).toISOString();
  }
  return undefined;
}
