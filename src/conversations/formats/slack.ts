/**
 * A Slack workspace export: a folder per channel holding one JSON array of messages per day
 * (`general/2024-03-01.json`), plus `channels.json` and `users.json` at the top. A thread (a
 * parent and the replies sharing its `thread_ts`) is one conversation, even when it spans
 * days; messages outside any thread make one conversation per channel and day. Channels are
 * read one at a time (each day file streamed), so memory holds one channel, not the export.
 * User names are not read: a conversation keeps roles, not who wrote it.
 */
import type { Readable } from 'node:stream';
import streamArray from 'stream-json/streamers/stream-array.js';
import {
  type Conversation,
  checkedItem,
  ExportError,
  isoTime,
  overLimit,
  type ParsedItem,
  type ParseLimits,
  type Turn,
} from '../model.js';
import { checkedPipeline, type PackageFile, underItemLimits } from './package-files.js';

interface SlackMessage {
  ts?: string;
  thread_ts?: string;
  user?: string;
  bot_id?: string;
  subtype?: string;
  text?: string;
}

/**
 * Whether paths relative to a folder make it a Slack export: `channels.json` or `users.json`
 * at its top, or day files one folder down (`general/2024-03-01.json`).
 */
export function looksLikeSlack(paths: readonly string[]): boolean {
  return paths.some(
    (path) => /^(channels|users)\.json$/.test(path) || /^[^/]+\/\d{4}-\d{2}-\d{2}\.json$/.test(path),
  );
}

export async function* parseSlack(
  files: readonly PackageFile[],
  limits: ParseLimits,
): AsyncGenerator<ParsedItem> {
  const byChannel = new Map<string, PackageFile[]>();
  for (const file of files) {
    const match = /(?:^|\/)([^/]+)\/(\d{4}-\d{2}-\d{2})\.json$/.exec(file.path);
    if (!match) continue;
    const channel = match[1] as string;
    byChannel.set(channel, [...(byChannel.get(channel) ?? []), file]);
  }
  for (const channel of [...byChannel.keys()].sort()) {
    const days = (byChannel.get(channel) ?? []).sort((a, b) => (a.path < b.path ? -1 : 1));
    const threads = new Map<string, SlackMessage[]>();
    // A conversation of too many messages keeps only why, not its messages.
    const overLimits = new Map<string, string>();
    for (const day of days) {
      const date = /(\d{4}-\d{2}-\d{2})\.json$/.exec(day.path)?.[1] as string;
      for await (const message of dayMessages(day, limits)) {
        // A thread groups by its parent's ts; the rest of the day is one conversation.
        const key = message.thread_ts ? `thread ${message.thread_ts}` : `day ${date}`;
        if (overLimits.has(key)) continue;
        const thread = threads.get(key) ?? [];
        thread.push(message);
        threads.set(key, thread);
        if (thread.length > limits.maxMessagesPerConversation) {
          overLimits.set(key, `more than ${limits.maxMessagesPerConversation} messages`);
          threads.delete(key);
        }
      }
    }
    for (const [key, reason] of overLimits) yield overLimit(slackConversationId(channel, key), reason);
    for (const [key, messages] of threads) yield slackConversation(channel, key, messages, limits);
  }
}

async function* dayMessages(file: PackageFile, limits: ParseLimits): AsyncGenerator<SlackMessage> {
  const stream: Readable = await file.open();
  // A message too large to build is left out while it is read.
  const items = checkedPipeline(
    stream,
    file.path,
    streamArray.withParserAsStream({
      objectFilter: underItemLimits(limits.maxItemValues, 1),
      includeUndecided: true,
    }),
  );
  try {
    for await (const { value } of items as AsyncIterable<{ value: SlackMessage }>) yield value;
  } catch (error) {
    if (error instanceof ExportError) throw error;
    throw new ExportError(`${file.path} is not a valid Slack day file: ${(error as Error).message}`);
  }
}

function slackConversation(
  channel: string,
  key: string,
  messages: SlackMessage[],
  limits: ParseLimits,
): ParsedItem {
  messages.sort((a, b) => Number(a.ts ?? 0) - Number(b.ts ?? 0));
  const asker = messages.find((message) => !message.bot_id && !message.subtype)?.user;
  const turns: Turn[] = messages.map((message) => {
    const at = isoTime(message.ts);
    const role =
      message.subtype && message.subtype !== 'bot_message'
        ? 'system'
        : message.bot_id || message.subtype === 'bot_message'
          ? 'assistant'
          : message.user === asker
            ? 'user'
            : 'agent';
    return { role, text: slackText(message.text ?? ''), ...(at ? { at } : {}) } satisfies Turn;
  });
  const conversation: Conversation = {
    conversation_id: slackConversationId(channel, key),
    source_format: 'slack',
    channel,
    turns: turns.filter((turn) => turn.text.trim() !== ''),
  };
  const started = turns[0]?.at;
  if (started) conversation.started_at = started;
  return checkedItem(conversation, limits);
}

function slackConversationId(channel: string, key: string): string {
  return `slack:${channel}:${key.replace(' ', ':')}`;
}

/** Slack markup as plain text: `<url|label>` to its label, mentions to `@user`, entities decoded. */
export function slackText(text: string): string {
  return text
    .replace(/<(?:https?|mailto):[^|>]*\|([^>]+)>/g, '$1')
    .replace(/<((?:https?|mailto):[^>]+)>/g, '$1')
    .replace(/<@[A-Z0-9]+(?:\|[^>]*)?>/g, '@user')
    .replace(/<#[A-Z0-9]+\|([^>]+)>/g, '#$1')
    .replace(/<!(here|channel|everyone)>/g, '@$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}
