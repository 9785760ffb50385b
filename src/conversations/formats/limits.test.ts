/**
 * The readers' limits per conversation (issue 30 item 6): a hostile conversation is refused by
 * name and limit while it is read, and the other conversations of the package go through.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { defaultParseLimits, type ParsedItem, type ParseLimits } from '../model.js';
import { parseChatGpt } from './chatgpt.js';
import { parseJsonl } from './jsonl.js';
import { parseSlack } from './slack.js';
import { htmlToText, parseTeams } from './teams.js';

async function all(items: AsyncIterable<ParsedItem>): Promise<ParsedItem[]> {
  const result: ParsedItem[] = [];
  for await (const item of items) result.push(item);
  return result;
}
const fromText = (text: string) => Readable.from([Buffer.from(text)]);
const summary = (items: ParsedItem[]) =>
  items.map((item) => ('conversation' in item ? item.conversation.conversation_id : item.rejected));
const small: ParseLimits = { ...defaultParseLimits, maxMessagesPerConversation: 100, maxItemValues: 20_000 };

function chatGpt(id: string, nodes: number) {
  const mapping: Record<string, unknown> = {};
  for (let index = 0; index < nodes; index++)
    mapping[`n${index}`] = {
      parent: index === 0 ? null : `n${index - 1}`,
      message: { author: { role: 'user' }, content: { parts: [`message ${index}`] } },
    };
  return { title: `conversation ${id}`, mapping, current_node: `n${nodes - 1}`, id };
}

describe('parse limits per conversation', () => {
  it('refuses a Teams body of 100,000 nested divs at once, by message, and reads linearly', () => {
    const nested = `${'<div>'.repeat(100_000)}x${'</div>'.repeat(100_000)}`;
    const started = performance.now();
    expect(() => htmlToText(nested)).toThrow(/nests elements more than 100 deep/);
    // A few milliseconds quiet; the bound tells an early refusal from reading 100,000 levels,
    // with room for a loaded CI machine.
    expect(performance.now() - started).toBeLessThan(2_000);
    // Time grows with the size and no faster: twice the blocks, about twice the time.
    const blocks = (count: number) =>
      '<div><p>Hei <b>du</b> &amp; <a href="x">lenke</a></p></div>'.repeat(count);
    const time = (html: string) => {
      const begin = performance.now();
      htmlToText(html);
      return performance.now() - begin;
    };
    time(blocks(2000));
    const single = Math.min(time(blocks(20_000)), time(blocks(20_000)));
    const double = Math.min(time(blocks(40_000)), time(blocks(40_000)));
    expect(double / single).toBeLessThan(4);
  });

  it('rejects the Teams conversation holding the deep body, and the one of too many messages, only', async () => {
    const message = (chatId: string, id: string, content: string) => ({
      id,
      chatId,
      messageType: 'message',
      createdDateTime: '2024-03-01T10:00:00Z',
      from: { user: { id: 'u1' } },
      body: { contentType: 'html', content },
    });
    const messages = [
      message('deep', 'm1', `${'<div>'.repeat(100_000)}x${'</div>'.repeat(100_000)}`),
      ...Array.from({ length: 101 }, (_, index) => message('crowded', `c${index}`, '<p>hei</p>')),
      message('fine', 'f1', '<p>hello <b>there</b></p>'),
    ];
    const items = await all(parseTeams(fromText(JSON.stringify(messages)), 'chat.json', small));
    expect(summary(items)).toEqual([
      { conversation_id: 'teams:crowded', reason: 'over the parse limits: more than 100 messages' },
      {
        conversation_id: 'teams:deep',
        reason:
          'over the parse limits: message m1: HTML nests elements more than 100 deep; refusing to parse it',
      },
      'teams:fine',
    ]);
  });

  it('refuses a ChatGPT conversation too large to build while it is read, naming it', async () => {
    const conversations = [chatGpt('huge', 5000), chatGpt('crowded', 150), chatGpt('fine', 3)];
    const before = process.memoryUsage().rss;
    const items = await all(parseChatGpt(fromText(JSON.stringify(conversations)), 'c.json', small));
    expect(summary(items)).toEqual([
      { conversation_id: 'huge', reason: 'over the parse limits: more than 20000 JSON values' },
      { conversation_id: 'crowded', reason: 'over the parse limits: 150 mapping nodes, more than 100' },
      'fine',
    ]);
    // Loose: the refused conversation was not built (5,000 nodes are a few MB at most anyway).
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
  });

  it('refuses a Slack thread of too many messages and a JSONL line of too many turns, only', async () => {
    const day = [
      ...Array.from({ length: 101 }, (_, index) => ({
        ts: `${1000 + index}`,
        thread_ts: '1000',
        user: 'U1',
        text: 'x',
      })),
      { ts: '2000', user: 'U1', text: 'on its own' },
    ];
    const files = [
      { path: 'channels.json', open: async () => fromText('[]') },
      { path: 'general/2024-03-01.json', open: async () => fromText(JSON.stringify(day)) },
    ];
    expect(summary(await all(parseSlack(files, small)))).toEqual([
      {
        conversation_id: 'slack:general:thread:1000',
        reason: 'over the parse limits: more than 100 messages',
      },
      'slack:general:day:2024-03-01',
    ]);
    const turns = Array.from({ length: 101 }, () => ({ role: 'user', text: 'x' }));
    const lines = `${JSON.stringify({ conversation_id: 'long', turns })}\n${JSON.stringify({ conversation_id: 'ok', turns: turns.slice(0, 2) })}\n`;
    expect(summary(await all(parseJsonl(fromText(lines), 'x.jsonl', small)))).toEqual([
      { conversation_id: 'long', reason: 'over the parse limits: 101 turns, more than 100' },
      'ok',
    ]);
  });
});
