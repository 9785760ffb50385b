/**
 * The plain format: one JSON object per line,
 * `{conversation_id, started_at, title?, turns: [{role, text, at}]}`. Each line is its own
 * conversation, so a bad line (invalid JSON, invalid UTF-8, a missing id) rejects that line
 * only and the rest of the file goes on.
 */
import type { Readable } from 'node:stream';
import {
  type Conversation,
  checkedItem,
  isoTime,
  overLimit,
  type ParsedItem,
  type ParseLimits,
  type Turn,
  type TurnRole,
  turnRoles,
} from '../model.js';
import { byteLines } from './package-files.js';

export async function* parseJsonl(
  stream: Readable,
  path: string,
  limits: ParseLimits,
): AsyncGenerator<ParsedItem> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let lineNumber = 0;
  for await (const bytes of byteLines(stream)) {
    lineNumber++;
    const where = `${path} line ${lineNumber}`;
    // A line is checked before it is decoded: a 100 MB line is refused without parsing it.
    if (bytes.length > limits.maxTurnCharacters * 4 + 65_536) {
      yield {
        rejected: { conversation_id: where, reason: `line of ${bytes.length} bytes, over the size limit` },
      };
      continue;
    }
    let text: string;
    try {
      text = decoder.decode(bytes);
    } catch {
      yield { rejected: { conversation_id: where, reason: 'the line is not valid UTF-8' } };
      continue;
    }
    if (!text.trim()) continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      yield { rejected: { conversation_id: where, reason: `invalid JSON: ${(error as Error).message}` } };
      continue;
    }
    yield jsonlConversation(value, where, limits);
  }
}

export function jsonlConversation(value: unknown, where: string, limits: ParseLimits): ParsedItem {
  const record = (value ?? {}) as Record<string, unknown>;
  const id = typeof record.conversation_id === 'string' ? record.conversation_id : undefined;
  if (!id) return { rejected: { conversation_id: where, reason: 'no `conversation_id` string' } };
  if (!Array.isArray(record.turns)) return { rejected: { conversation_id: id, reason: 'no `turns` array' } };
  if (record.turns.length > limits.maxMessagesPerConversation)
    return overLimit(id, `${record.turns.length} turns, more than ${limits.maxMessagesPerConversation}`);
  const turns: Turn[] = [];
  for (const raw of record.turns as Record<string, unknown>[]) {
    if (typeof raw?.text !== 'string') continue;
    const role = turnRoles.includes(raw.role as TurnRole) ? (raw.role as TurnRole) : 'user';
    const at = isoTime(raw.at);
    turns.push({ role, text: raw.text, ...(at ? { at } : {}) });
  }
  const conversation: Conversation = { conversation_id: id, source_format: 'jsonl', turns };
  if (typeof record.title === 'string') conversation.title = record.title;
  const started = isoTime(record.started_at) ?? turns[0]?.at;
  if (started) conversation.started_at = started;
  return checkedItem(conversation, limits);
}
