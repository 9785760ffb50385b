/**
 * A ChatGPT data export's `conversations.json`: one array of conversations, each a `mapping`
 * of message nodes linked by `parent`/`children`. The conversation as the user last saw it is
 * the path from `current_node` up to the root (edited branches are left out). The array is
 * streamed one conversation at a time, so the file's size does not matter. Text parts are
 * kept; image and file parts are left out, files the user attached named as `[file: name]`;
 * custom instructions (`user_editable_context`) and hidden nodes are not turns.
 */
import type { Readable } from 'node:stream';
import {
  type Conversation,
  checkedItem,
  ExportError,
  isoTime,
  overLimit,
  type ParsedItem,
  type ParseLimits,
  type Turn,
  type TurnRole,
} from '../model.js';
import { type BoundedItem, boundedArrayItems, checkedPipeline } from './package-files.js';

interface ChatGptNode {
  parent?: string | null;
  message?: {
    author?: { role?: string };
    create_time?: number | null;
    content?: { content_type?: string; parts?: unknown[]; text?: string };
    metadata?: {
      is_visually_hidden_from_conversation?: boolean;
      /** Files the user attached (an image, a PDF): named, not read. */
      attachments?: Array<{ name?: string } | null>;
    };
  } | null;
}

export async function* parseChatGpt(
  stream: Readable,
  path: string,
  limits: ParseLimits,
): AsyncGenerator<ParsedItem> {
  const items = checkedPipeline(
    stream,
    path,
    boundedArrayItems(limits.maxItemValues, limits.maxItemCharacters),
  );
  let count = 0;
  try {
    for await (const item of items as AsyncIterable<BoundedItem>) {
      count++;
      if ('overLimit' in item) {
        const { id, conversation_id, title } = item.fields;
        const name = conversation_id ?? id ?? `#${count}${title ? ` (${JSON.stringify(title)})` : ''}`;
        yield overLimit(name, item.overLimit);
      } else yield chatGptConversation(item.value, count, limits);
    }
  } catch (error) {
    if (error instanceof ExportError) throw error;
    throw new ExportError(
      `${path} is not a valid ChatGPT export after ${count} conversations (truncated or corrupt JSON): ${(error as Error).message}`,
    );
  }
}

/** One element of the export array as a conversation, or why not. */
export function chatGptConversation(value: unknown, position: number, limits: ParseLimits): ParsedItem {
  const record = (value ?? {}) as Record<string, unknown>;
  const id = String(record.conversation_id ?? record.id ?? `#${position}`);
  const mapping = record.mapping as Record<string, ChatGptNode> | undefined;
  if (!mapping || typeof mapping !== 'object')
    return { rejected: { conversation_id: id, reason: 'no `mapping` of messages' } };
  const nodes = Object.keys(mapping).length;
  if (nodes > limits.maxMessagesPerConversation)
    return overLimit(id, `${nodes} mapping nodes, more than ${limits.maxMessagesPerConversation}`);
  const path = branchToCurrent(
    mapping,
    typeof record.current_node === 'string' ? record.current_node : undefined,
  );
  if ('cycle' in path)
    return {
      rejected: { conversation_id: id, reason: `the mapping tree has a cycle through node ${path.cycle}` },
    };
  const turns: Turn[] = [];
  for (const nodeId of path.nodes) {
    const message = mapping[nodeId]?.message;
    if (!message || message.metadata?.is_visually_hidden_from_conversation) continue;
    // Custom instructions and memory ride along as the user's or the model's nodes; nobody said them.
    if (/_editable_context$/.test(message.content?.content_type ?? '')) continue;
    const files = (message.metadata?.attachments ?? [])
      .filter((file) => typeof file?.name === 'string' && file.name !== '')
      .map((file) => `[file: ${file?.name}]`);
    const text = [messageText(message.content), ...files].filter((part) => part.trim() !== '').join('\n');
    if (!text.trim()) continue;
    const at = isoTime(message.create_time);
    turns.push({ role: roleOf(message.author?.role), text, ...(at ? { at } : {}) });
  }
  const conversation: Conversation = {
    conversation_id: id,
    source_format: 'chatgpt',
    turns,
    ...(typeof record.title === 'string' ? { title: record.title } : {}),
  };
  const started = isoTime(record.create_time) ?? turns[0]?.at;
  if (started) conversation.started_at = started;
  return checkedItem(conversation, limits);
}

/** Node ids from the root down to `current` (or to the last leaf when there is none). */
function branchToCurrent(
  mapping: Record<string, ChatGptNode>,
  current: string | undefined,
): { nodes: string[] } | { cycle: string } {
  const start = current && mapping[current] ? current : lastLeaf(mapping);
  const nodes: string[] = [];
  const seen = new Set<string>();
  for (let node = start; node !== undefined && mapping[node]; ) {
    if (seen.has(node)) return { cycle: node };
    seen.add(node);
    nodes.push(node);
    const parent = mapping[node]?.parent;
    node = typeof parent === 'string' ? parent : undefined;
  }
  return { nodes: nodes.reverse() };
}

function lastLeaf(mapping: Record<string, ChatGptNode>): string | undefined {
  const ids = Object.keys(mapping);
  const parents = new Set(
    ids.map((id) => mapping[id]?.parent).filter((parent) => typeof parent === 'string'),
  );
  return ids.filter((id) => !parents.has(id)).at(-1);
}

function messageText(content: { parts?: unknown[]; text?: string } | undefined): string {
  if (!content) return '';
  if (Array.isArray(content.parts))
    return content.parts.filter((part): part is string => typeof part === 'string').join('\n');
  return typeof content.text === 'string' ? content.text : '';
}

function roleOf(role: string | undefined): TurnRole {
  return role === 'assistant'
    ? 'assistant'
    : role === 'system'
      ? 'system'
      : role === 'tool'
        ? 'tool'
        : 'user';
}
