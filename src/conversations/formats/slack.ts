/**
 * A Slack workspace export: a folder per channel holding one JSON array of messages per day
 * (`general/2024-03-01.json`), plus `channels.json` and `users.json` at the top. A thread (a
 * parent and the replies sharing its `thread_ts`) is one conversation, even when it spans
 * days; messages outside any thread make one conversation per channel and day. Channels are
 * read one at a time (each day file streamed), so memory holds one channel, not the export.
 * User names are not read: a conversation keeps roles, not who wrote it.
 *
 * What a person wrote is kept whatever its subtype: a plain message, a file shared with a
 * comment (`file_share`, the file named in brackets), a reply also sent to the channel
 * (`thread_broadcast`), `/me` text. A bot's text is often only in `attachments` (Jira, CI) or
 * `blocks` (Block Kit): it is read from there and the turn marked with the bot's name.
 * Channel events (`channel_join`, `channel_topic`, pins...) are `system` turns.
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
  username?: string;
  bot_profile?: { name?: string } | null;
  attachments?: SlackAttachment[] | null;
  blocks?: unknown[] | null;
  files?: Array<{ name?: string; title?: string; mode?: string }> | null;
}

interface SlackAttachment {
  fallback?: string;
  pretext?: string;
  author_name?: string;
  title?: string;
  title_link?: string;
  text?: string;
  fields?: Array<{ title?: string; value?: string }> | null;
  footer?: string;
  blocks?: unknown[] | null;
  is_msg_unfurl?: boolean;
  message_blocks?: unknown[] | null;
}

/** Subtypes a person writes; every other subtype but `bot_message` is a channel event. */
const humanSubtypes = new Set(['file_share', 'thread_broadcast', 'reply_broadcast', 'me_message']);
/** Left out: a deleted parent kept only so its replies hang together. */
const skippedSubtypes = new Set(['tombstone']);

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
  const live = messages.filter((message) => !skippedSubtypes.has(message.subtype ?? ''));
  const asker = live.find((message) => authorKind(message) === 'person')?.user;
  const turns: Turn[] = [];
  for (const message of live) {
    const at = isoTime(message.ts);
    const kind = authorKind(message);
    const text = kind === 'bot' ? botText(message) : personText(message);
    if (text.trim() === '') continue;
    const role =
      kind === 'event' ? 'system' : kind === 'bot' ? 'assistant' : message.user === asker ? 'user' : 'agent';
    turns.push({
      role,
      text,
      ...(kind === 'bot' ? { bot: botName(message) } : {}),
      ...(at ? { at } : {}),
    });
  }
  const conversation: Conversation = {
    conversation_id: slackConversationId(channel, key),
    source_format: 'slack',
    channel,
    turns,
  };
  const started = isoTime(live[0]?.ts);
  if (started) conversation.started_at = started;
  return checkedItem(conversation, limits);
}

/** Who wrote a message: a person (any subtype a person writes), a bot or integration, or the channel itself. */
function authorKind(message: SlackMessage): 'person' | 'bot' | 'event' {
  if (message.subtype === 'bot_message' || message.bot_id) return 'bot';
  if (!message.subtype || humanSubtypes.has(message.subtype)) return message.user ? 'person' : 'bot';
  return 'event';
}

/** A person's text: the message, else its blocks (a message sent with blocks only), and the files they shared. */
function personText(message: SlackMessage): string {
  const written = slackText(message.text ?? '').trim() || blocksText(message.blocks);
  const files = (message.files ?? [])
    .filter((file) => file.mode !== 'tombstone' && (file.title || file.name))
    .map((file) => `[file: ${file.title || file.name}]`);
  return [written, ...files].filter((part) => part !== '').join('\n');
}

/** A bot's text: its message, else its blocks, and every attachment (Jira, CI, alert bots write there). */
function botText(message: SlackMessage): string {
  const own = slackText(message.text ?? '').trim();
  const parts = [own || blocksText(message.blocks)];
  for (const attachment of message.attachments ?? []) {
    const fromBlocks = blocksText(attachment.blocks ?? attachment.message_blocks);
    const fields = (attachment.fields ?? [])
      .filter((field) => field.value)
      .map((field) => `${field.title ? `${field.title}: ` : ''}${slackText(field.value ?? '')}`);
    const lines = [attachment.pretext, attachment.author_name, attachment.title, attachment.text]
      .filter((line): line is string => typeof line === 'string' && line.trim() !== '')
      .map((line) => slackText(line).trim());
    const body = [...lines, ...fields, fromBlocks, attachment.footer ? slackText(attachment.footer) : '']
      .filter((line) => line !== '')
      .join('\n');
    // The fallback is the plain-text summary of an attachment that has nothing else.
    parts.push(body || slackText(attachment.fallback ?? '').trim());
  }
  return unique(parts.filter((part) => part !== '')).join('\n');
}

function botName(message: SlackMessage): string {
  return message.bot_profile?.name || message.username || message.bot_id || 'bot';
}

/**
 * The text of Block Kit blocks: `rich_text` sections, lists (ordered ones numbered), quotes
 * and code; `section`, `header` and `context` text and fields. Buttons and images say nothing.
 */
export function blocksText(blocks: readonly unknown[] | null | undefined): string {
  const lines: string[] = [];
  for (const block of blocks ?? []) lines.push(...blockLines(block as SlackBlock));
  return lines.filter((line) => line.trim() !== '').join('\n');
}

interface SlackBlock {
  type?: string;
  text?: { text?: string } | string;
  fields?: Array<{ text?: string }>;
  elements?: SlackBlock[];
  style?: string;
  indent?: number;
  url?: string;
  name?: string;
  user_id?: string;
  channel_id?: string;
  range?: string;
}

function blockLines(block: SlackBlock): string[] {
  switch (block.type) {
    case 'rich_text':
      return (block.elements ?? []).flatMap(blockLines);
    case 'rich_text_section':
    case 'rich_text_preformatted':
      return inline(block.elements).split('\n');
    case 'rich_text_quote':
      return inline(block.elements)
        .split('\n')
        .map((line) => `> ${line}`);
    case 'rich_text_list': {
      const indent = '  '.repeat(block.indent ?? 0);
      return (block.elements ?? []).map(
        (item, index) =>
          `${indent}${block.style === 'ordered' ? `${index + 1}.` : '-'} ${inline(item.elements)}`,
      );
    }
    case 'section':
    case 'header':
      return [
        typeof block.text === 'object' ? slackText(block.text?.text ?? '') : '',
        ...(block.fields ?? []).map((field) => slackText(field.text ?? '')),
      ];
    case 'context':
      return [
        (block.elements ?? [])
          .map((element) => (typeof element.text === 'string' ? slackText(element.text) : ''))
          .join(' '),
      ];
    default:
      return [];
  }
}

/** Rich text elements as plain text: text and links as written, mentions as `@user` and `#channel`. */
function inline(elements: readonly SlackBlock[] | undefined): string {
  return (elements ?? [])
    .map((element) => {
      if (element.type === 'text') return typeof element.text === 'string' ? element.text : '';
      if (element.type === 'link')
        return typeof element.text === 'string' && element.text ? element.text : (element.url ?? '');
      if (element.type === 'user') return '@user';
      if (element.type === 'channel') return '#channel';
      if (element.type === 'broadcast') return `@${element.range ?? 'here'}`;
      if (element.type === 'emoji') return '';
      return typeof element.text === 'string' ? element.text : '';
    })
    .join('');
}

function unique(parts: readonly string[]): string[] {
  return parts.filter((part, index) => parts.indexOf(part) === index);
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
