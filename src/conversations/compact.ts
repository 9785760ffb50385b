/**
 * One text per conversation for the later stages (conv_compact): the turns as `role: text`
 * lines, with what says nothing about the topic dropped — platform/system turns, quoted
 * replies (`> ` lines, "On ... wrote:" headers), e-mail style signatures and greetings-only
 * sign-offs — plus turn and token counts and a content hash that identifies the text.
 */
import { createHash } from 'node:crypto';
import type { Conversation, Turn, TurnRole } from './model.js';

export interface CompactTurn {
  role: TurnRole;
  text: string;
  at?: string;
  /** The bot that wrote it, when a team chat's bot did. */
  bot?: string;
}

export interface CompactConversation {
  conversation_id: string;
  source_format: string;
  title?: string;
  channel?: string;
  started_at?: string;
  ended_at?: string;
  /** Roles present, sorted. */
  roles: TurnRole[];
  turn_count: number;
  /** Approximate tokens of `text` (words and punctuation, about 4 characters each). */
  token_count: number;
  /** sha256 of `text`: equal hashes are exact duplicates. */
  content_hash: string;
  text: string;
  turns: CompactTurn[];
}

const signatureStart =
  /^(--\s*$|—\s*$|sent from my |sendt fra min |skickat från min |med vennlig hilsen|mvh\b|vennlig hilsen|best regards|kind regards|regards,|med venlig hilsen|med vänliga hälsningar|hilsen\s*$)/i;
const quoteHeader = /^(on .{3,80} wrote:|den .{3,80} skrev:|.{3,80} skrev( følgende)?:)\s*$/i;

/** The turn's text without quoted replies and the signature (everything after its first line). */
export function cleanTurnText(text: string): string {
  const kept: string[] = [];
  for (const raw of text.replace(/\r\n?/g, '\n').split('\n')) {
    const line = raw.trim();
    if (line.startsWith('>')) continue;
    if (quoteHeader.test(line)) break; // a reply's quoted history follows its header
    if (signatureStart.test(line)) break;
    kept.push(line);
  }
  return kept
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

export function compactConversation(conversation: Conversation): CompactConversation {
  const turns: CompactTurn[] = [];
  for (const turn of conversation.turns) {
    if (turn.role === 'system' || turn.role === 'tool') continue;
    const text = cleanTurnText(turn.text);
    if (!text) continue;
    turns.push({
      role: turn.role,
      text,
      ...(turn.at ? { at: turn.at } : {}),
      ...(turn.bot ? { bot: turn.bot } : {}),
    });
  }
  const text = turns.map((turn) => `${turn.role}: ${turn.text}`).join('\n');
  const times = conversation.turns
    .map((turn: Turn) => turn.at)
    .filter((at): at is string => Boolean(at))
    .sort();
  const compact: CompactConversation = {
    conversation_id: conversation.conversation_id,
    source_format: conversation.source_format,
    roles: [...new Set(turns.map((turn) => turn.role))].sort(),
    turn_count: turns.length,
    token_count: approximateTokens(text),
    content_hash: createHash('sha256').update(text).digest('hex'),
    text,
    turns,
  };
  if (conversation.title) compact.title = conversation.title;
  if (conversation.channel) compact.channel = conversation.channel;
  const started = conversation.started_at ?? times[0];
  if (started) compact.started_at = started;
  if (times.length > 0) compact.ended_at = times.at(-1) as string;
  return compact;
}

/** Words and punctuation marks: close to a BPE tokenizer's count on chat text, at no cost. */
export function approximateTokens(text: string): number {
  return text.match(/[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu)?.length ?? 0;
}

/**
 * The turns' texts back from a compact `text` (`role: text` lines, a turn's later lines
 * without a prefix), without the role prefixes; `user` keeps only the user turns.
 */
export function turnTexts(text: string, which: 'all' | 'user'): string {
  const kept: string[] = [];
  let role = '';
  for (const line of text.split('\n')) {
    const prefix = /^(user|assistant|agent|system|tool): /.exec(line);
    if (prefix) role = prefix[1] as string;
    if (which === 'user' && role !== 'user') continue;
    kept.push(prefix ? line.slice(prefix[0].length) : line);
  }
  return kept.join('\n');
}
