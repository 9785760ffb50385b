/**
 * Microsoft Teams messages as Microsoft Graph returns them (`chatMessage` resources): a JSON
 * array, or a Graph page `{"value": [...]}`. A chat (`chatId`) or a channel thread (the root
 * message and its `replyToId` replies) is one conversation. The file is streamed message by
 * message; messages are grouped per conversation in memory (a Graph export file is one chat
 * or one channel's page, not a whole tenant). Bodies are HTML: turned into text, quoted
 * replies (`<blockquote>`) marked with `> ` so compaction can drop them.
 */
import type { Readable } from 'node:stream';
import { Parser } from 'htmlparser2';
import pick from 'stream-json/filters/pick.js';
import parser from 'stream-json/parser.js';
import streamValues from 'stream-json/streamers/stream-values.js';
import { assertNestingBounded, HtmlInputError } from '../../markdown/html-input-guards.js';
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
import { checkedPipeline, underItemLimits } from './package-files.js';

interface ChatMessage {
  id?: string;
  replyToId?: string | null;
  chatId?: string | null;
  channelIdentity?: { channelId?: string } | null;
  messageType?: string;
  createdDateTime?: string;
  deletedDateTime?: string | null;
  subject?: string | null;
  from?: {
    user?: { id?: string } | null;
    application?: { id?: string; displayName?: string | null } | null;
  } | null;
  body?: { contentType?: string; content?: string };
  attachments?: Array<{ contentType?: string; content?: string | null; name?: string | null }> | null;
}

export async function* parseTeams(
  stream: Readable,
  path: string,
  limits: ParseLimits,
): AsyncGenerator<ParsedItem> {
  // Items of a top-level array, or of a Graph page's `value` array.
  // A message too large to build (values, characters) is dropped as it is read; a
  // conversation of too many messages keeps only its count.
  const items = checkedPipeline(
    stream,
    path,
    parser.asStream(),
    pick.asStream({ filter: /^(\d+|value\.\d+)$/ }),
    streamValues.asStream({ objectFilter: underItemLimits(limits.maxItemValues, 0), includeUndecided: true }),
  );
  const groups = new Map<string, ChatMessage[]>();
  const overLimits = new Map<string, string>();
  let count = 0;
  try {
    for await (const { value } of items as AsyncIterable<{ value: ChatMessage }>) {
      count++;
      const key = conversationKey(value);
      if (overLimits.has(key)) continue;
      const group = groups.get(key) ?? [];
      group.push(value);
      groups.set(key, group);
      if (group.length > limits.maxMessagesPerConversation) {
        overLimits.set(key, `more than ${limits.maxMessagesPerConversation} messages`);
        groups.delete(key);
      }
    }
  } catch (error) {
    if (error instanceof ExportError) throw error;
    throw new ExportError(
      `${path} is not a valid Teams message list after ${count} messages (truncated or corrupt JSON): ${(error as Error).message}`,
    );
  }
  for (const [key, reason] of overLimits) yield overLimit(key, reason);
  for (const [key, messages] of groups) yield teamsConversation(key, messages, limits);
}

function conversationKey(message: ChatMessage): string {
  if (message.chatId) return `teams:${message.chatId}`;
  const channel = message.channelIdentity?.channelId ?? 'channel';
  return `teams:${channel}:${message.replyToId ?? message.id ?? 'unknown'}`;
}

function teamsConversation(key: string, messages: ChatMessage[], limits: ParseLimits): ParsedItem {
  messages.sort((a, b) => String(a.createdDateTime ?? '').localeCompare(String(b.createdDateTime ?? '')));
  const live = messages.filter((message) => !message.deletedDateTime);
  const asker = live.find((message) => message.messageType === 'message' && message.from?.user)?.from?.user
    ?.id;
  const turns: Turn[] = [];
  for (const message of live) {
    const raw = message.body?.content ?? '';
    let text: string;
    try {
      text = message.body?.contentType === 'html' ? htmlToText(raw) : raw;
    } catch (error) {
      if (!(error instanceof HtmlInputError)) throw error;
      return overLimit(key, `message ${message.id ?? '(no id)'}: ${error.message}`);
    }
    text = [text, ...attachmentLines(message.attachments)].filter((part) => part.trim() !== '').join('\n');
    if (!text.trim()) continue;
    const at = isoTime(message.createdDateTime);
    const application = message.from?.application;
    const role =
      message.messageType !== 'message'
        ? 'system'
        : application
          ? 'assistant'
          : message.from?.user?.id === asker
            ? 'user'
            : 'agent';
    const bot = role === 'assistant' ? application?.displayName || application?.id || 'app' : undefined;
    turns.push({ role, text, ...(bot ? { bot } : {}), ...(at ? { at } : {}) });
  }
  const conversation: Conversation = { conversation_id: key, source_format: 'teams', turns };
  const subject = live.find((message) => message.subject)?.subject;
  if (subject) conversation.title = subject;
  const channel = live[0]?.channelIdentity?.channelId;
  if (channel) conversation.channel = channel;
  if (turns[0]?.at) conversation.started_at = turns[0].at;
  return checkedItem(conversation, limits);
}

/**
 * What a message's attachments say: a shared file by its name, an Adaptive Card (what bots
 * and connectors post) by its text blocks and facts. A quoted reply (`messageReference`)
 * repeats an earlier message and is left out, like a `<blockquote>`.
 */
function attachmentLines(attachments: ChatMessage['attachments']): string[] {
  const lines: string[] = [];
  for (const attachment of attachments ?? []) {
    if (attachment.contentType === 'reference' && attachment.name) lines.push(`[file: ${attachment.name}]`);
    else if (attachment.contentType === 'application/vnd.microsoft.card.adaptive' && attachment.content) {
      try {
        lines.push(...cardText(JSON.parse(attachment.content)));
      } catch {
        // A card that is not JSON says nothing readable.
      }
    }
  }
  return lines;
}

/** TextBlock and RichTextBlock texts and FactSet facts of an Adaptive Card, in order. */
function cardText(node: unknown, depth = 0): string[] {
  if (depth > maxTeamsNesting || node === null || typeof node !== 'object') return [];
  if (Array.isArray(node)) return node.flatMap((item) => cardText(item, depth + 1));
  const element = node as Record<string, unknown>;
  if (element.type === 'TextBlock' && typeof element.text === 'string') return [element.text];
  if (element.type === 'TextRun' && typeof element.text === 'string') return [element.text];
  if (element.type === 'FactSet' && Array.isArray(element.facts))
    return (element.facts as Array<{ title?: string; value?: string }>).map(
      (fact) => `${fact.title ? `${fact.title}: ` : ''}${fact.value ?? ''}`,
    );
  return ['body', 'inlines', 'items', 'columns'].flatMap((field) => cardText(element[field], depth + 1));
}

/** Deepest element nesting of a message body; a chat message nests a handful of levels. */
export const maxTeamsNesting = 100;

/**
 * Text of a Teams HTML body: block elements break lines, list items keep their number
 * (`1.`, from `<ol start>`) or get `- `, nested lists indented, quotes get `> `, mentions
 * (`<at>`) become `@user`, emoji their `alt`, entities decoded. Deeper nesting than
 * `maxTeamsNesting` throws HtmlInputError: the parser keeps open elements in an array it
 * grows at the front, so 100,000 nested `<div>`s cost it quadratic time.
 */
export function htmlToText(html: string): string {
  assertNestingBounded(html, maxTeamsNesting);
  const lines: string[] = [];
  let line = '';
  let marker = '';
  let quoteDepth = 0;
  let mentionDepth = 0;
  const lists: Array<{ ordered: boolean; next: number }> = [];
  const breakLine = () => {
    line = line.trim();
    if (!line) return; // an item's marker waits for its text (`<li><p>text</p></li>`)
    lines.push(`${quoteDepth > 0 ? '> ' : ''}${marker}${line}`);
    line = '';
    marker = '';
  };
  const blocks = new Set([
    'p',
    'div',
    'br',
    'li',
    'tr',
    'h1',
    'h2',
    'h3',
    'h4',
    'blockquote',
    'pre',
    'ol',
    'ul',
  ]);
  const html2 = new Parser(
    {
      onopentag(name, attributes) {
        if (blocks.has(name)) breakLine();
        if (name === 'blockquote') quoteDepth++;
        if (name === 'ol' || name === 'ul') {
          const start = Number.parseInt(attributes.start ?? '1', 10);
          lists.push({ ordered: name === 'ol', next: Number.isFinite(start) ? start : 1 });
        }
        if (name === 'li') {
          const list = lists.at(-1);
          const indent = '  '.repeat(Math.max(0, lists.length - 1));
          marker = list?.ordered ? `${indent}${list.next++}. ` : `${indent}- `;
        }
        if (name === 'at') {
          mentionDepth++;
          line += '@user';
        }
        if ((name === 'emoji' || name === 'img') && attributes.alt) line += attributes.alt;
      },
      ontext(text) {
        if (mentionDepth === 0) line += text;
      },
      onclosetag(name) {
        if (name === 'at') mentionDepth--;
        if (blocks.has(name)) breakLine();
        if (name === 'li') marker = ''; // an empty item leaves no number behind
        if (name === 'blockquote') quoteDepth--;
        if (name === 'ol' || name === 'ul') lists.pop();
      },
    },
    { decodeEntities: true },
  );
  html2.write(html);
  html2.end();
  breakLine();
  return lines.join('\n');
}
