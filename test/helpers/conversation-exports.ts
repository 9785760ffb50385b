/**
 * Writers that put one set of synthetic conversations (test/helpers/conversation-fixtures.ts) into
 * the four export formats the conversation adapters read: JSONL, ChatGPT, Teams and Slack.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FixtureConversation } from './conversation-fixtures.js';
export function toJsonl(conversations: readonly FixtureConversation[]): string {
  return conversations
    .map((conversation) =>
      JSON.stringify({
        conversation_id: conversation.conversation_id,
        started_at: conversation.started_at,
        title: conversation.title,
        turns: conversation.turns,
      }),
    )
    .join('\n');
}

/** A ChatGPT `conversations.json`: each conversation a mapping tree from a root to `current_node`. */
export function toChatGpt(conversations: readonly FixtureConversation[]): string {
  return JSON.stringify(
    conversations.map((conversation) => {
      const mapping: Record<string, unknown> = {
        root: { id: 'root', message: null, parent: null, children: ['system'] },
        system: {
          id: 'system',
          parent: 'root',
          children: ['n0'],
          message: {
            author: { role: 'system' },
            content: { content_type: 'text', parts: [''] },
            metadata: { is_visually_hidden_from_conversation: true },
          },
        },
      };
      conversation.turns.forEach((turn, index) => {
        mapping[`n${index}`] = {
          id: `n${index}`,
          parent: index === 0 ? 'system' : `n${index - 1}`,
          children: index + 1 < conversation.turns.length ? [`n${index + 1}`] : [],
          message: {
            author: { role: turn.role },
            create_time: Date.parse(turn.at) / 1000,
            content: { content_type: 'text', parts: [turn.text] },
          },
        };
      });
      return {
        id: conversation.conversation_id,
        title: conversation.title,
        create_time: Date.parse(conversation.started_at) / 1000,
        current_node: `n${conversation.turns.length - 1}`,
        mapping,
      };
    }),
  );
}

/** Graph `chatMessage` resources, one chat per conversation, bodies as HTML. */
export function toTeams(conversations: readonly FixtureConversation[]): string {
  const value = conversations.flatMap((conversation) =>
    conversation.turns.map((turn, index) => ({
      id: `${conversation.conversation_id}-${index}`,
      chatId: conversation.conversation_id,
      messageType: 'message',
      createdDateTime: turn.at,
      deletedDateTime: null,
      from:
        turn.role === 'user'
          ? { user: { id: `user-${conversation.conversation_id}`, displayName: 'Asker' }, application: null }
          : { user: null, application: { id: 'helpdesk-bot', displayName: 'Helpdesk' } },
      body: {
        contentType: 'html',
        content: turn.text
          .split('\n')
          .map((line) => `<p>${line.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</p>`)
          .join(''),
      },
    })),
  );
  return JSON.stringify({
    '@odata.context': 'https://graph.microsoft.com/v1.0/$metadata#chats/messages',
    value,
  });
}

/** A Slack export: each conversation a thread in channel `support`, day files by the thread's date. */
export function toSlack(conversations: readonly FixtureConversation[]): Map<string, string> {
  const days = new Map<string, unknown[]>();
  conversations.forEach((conversation, position) => {
    const threadTs = `${Math.floor(Date.parse(conversation.started_at) / 1000)}.${String(position).padStart(6, '0')}`;
    conversation.turns.forEach((turn, index) => {
      const day = turn.at.slice(0, 10);
      const ts = `${Math.floor(Date.parse(turn.at) / 1000) + index}.${String(position).padStart(6, '0')}`;
      const message =
        turn.role === 'user'
          ? {
              type: 'message',
              user: `U${position}`,
              text: turn.text,
              ts: index === 0 ? threadTs : ts,
              thread_ts: threadTs,
            }
          : {
              type: 'message',
              subtype: 'bot_message',
              bot_id: 'BHELP',
              text: turn.text,
              ts,
              thread_ts: threadTs,
            };
      days.set(`support/${day}.json`, [...(days.get(`support/${day}.json`) ?? []), message]);
    });
  });
  const files = new Map<string, string>([['channels.json', JSON.stringify([{ id: 'C1', name: 'support' }])]]);
  for (const [file, messages] of [...days].sort()) files.set(file, JSON.stringify(messages));
  return files;
}

/** Writes the conversations in every format under `directory` and returns the paths. */
export async function writeFixtureExports(directory: string, conversations: readonly FixtureConversation[]) {
  await mkdir(path.join(directory, 'chatgpt'), { recursive: true });
  const paths = {
    jsonl: path.join(directory, 'conversations.jsonl'),
    chatgpt: path.join(directory, 'chatgpt', 'conversations.json'),
    teams: path.join(directory, 'teams-messages.json'),
    slack: path.join(directory, 'slack-export'),
  };
  await writeFile(paths.jsonl, toJsonl(conversations));
  await writeFile(paths.chatgpt, toChatGpt(conversations));
  await writeFile(paths.teams, toTeams(conversations));
  for (const [file, body] of toSlack(conversations)) {
    await mkdir(path.dirname(path.join(paths.slack, file)), { recursive: true });
    await writeFile(path.join(paths.slack, file), body);
  }
  return paths;
}
