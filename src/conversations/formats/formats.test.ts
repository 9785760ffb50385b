import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { writeFixtureExports } from '../../../test/helpers/conversation-exports.js';
import { generateConversations } from '../../../test/helpers/conversation-fixtures.js';
import { defaultParseLimits, type ParsedItem } from '../model.js';
import { localPackageFiles } from '../packages.js';
import { parseChatGpt } from './chatgpt.js';
import { parseJsonl } from './jsonl.js';
import { detectFormat, readPackage } from './read-package.js';
import { slackText } from './slack.js';
import { htmlToText } from './teams.js';

const directory = await mkdtemp(path.join(tmpdir(), 'weir-conv-formats-'));
afterAll(() => rm(directory, { recursive: true, force: true }));

const fixture = generateConversations({ seed: 3, count: 40 });
const exports = await writeFixtureExports(directory, fixture);

async function all(items: AsyncIterable<ParsedItem>): Promise<ParsedItem[]> {
  const result: ParsedItem[] = [];
  for await (const item of items) result.push(item);
  return result;
}

const fromText = (text: string | Buffer) => Readable.from([Buffer.from(text)]);

describe('export formats', () => {
  it.each([
    'jsonl',
    'chatgpt',
    'teams',
    'slack',
  ] as const)('reads the %s export into the same turns', async (format) => {
    const files = await localPackageFiles(exports[format]);
    expect(await detectFormat(files)).toBe(format);
    const items = await all(readPackage(format, files, defaultParseLimits));
    const conversations = items.map((item) => ('conversation' in item ? item.conversation : undefined));
    expect(conversations.every((conversation) => conversation !== undefined)).toBe(true);
    expect(conversations).toHaveLength(fixture.length);
    // Whatever the format, each conversation keeps its turns' texts and roles in order, and its start.
    const shape = (turns: ReadonlyArray<{ role: string; text: string }>, started: string | undefined) =>
      JSON.stringify([started, turns.map((turn) => [turn.role, turn.text])]);
    expect(
      conversations.map((conversation) => shape(conversation?.turns ?? [], conversation?.started_at)).sort(),
    ).toEqual(fixture.map((conversation) => shape(conversation.turns, conversation.started_at)).sort());
  });

  it('walks the ChatGPT mapping from current_node, leaving out an edited branch', async () => {
    const mapping = {
      a: { parent: null, message: { author: { role: 'user' }, content: { parts: ['first question'] } } },
      b: { parent: 'a', message: { author: { role: 'assistant' }, content: { parts: ['old answer'] } } },
      c: {
        parent: 'a',
        message: { author: { role: 'assistant' }, content: { parts: ['regenerated answer'] } },
      },
    };
    const [item] = await all(
      parseChatGpt(
        fromText(JSON.stringify([{ id: 'x', current_node: 'c', mapping }])),
        'c.json',
        defaultParseLimits,
      ),
    );
    expect(item).toMatchObject({
      conversation: { turns: [{ text: 'first question' }, { text: 'regenerated answer' }] },
    });
  });

  it('rejects a mapping tree with a cycle, and a 100 MB message, as that conversation only', async () => {
    const cycle = {
      id: 'loop',
      current_node: 'a',
      mapping: {
        a: { parent: 'b', message: { author: { role: 'user' }, content: { parts: ['x'] } } },
        b: { parent: 'a', message: { author: { role: 'user' }, content: { parts: ['y'] } } },
      },
    };
    const huge = {
      id: 'huge',
      current_node: 'a',
      mapping: {
        a: {
          parent: null,
          message: { author: { role: 'user' }, content: { parts: ['x'.repeat(100 * 1024 * 1024)] } },
        },
      },
    };
    const fine = {
      id: 'fine',
      current_node: 'a',
      mapping: { a: { parent: null, message: { author: { role: 'user' }, content: { parts: ['hello'] } } } },
    };
    const items = await all(
      parseChatGpt(
        fromText(`[${JSON.stringify(cycle)},${JSON.stringify(huge)},${JSON.stringify(fine)}]`),
        'c.json',
        defaultParseLimits,
      ),
    );
    expect(items).toEqual([
      { rejected: { conversation_id: 'loop', reason: 'the mapping tree has a cycle through node a' } },
      {
        rejected: {
          conversation_id: 'huge',
          // Dropped while it is read (64 MiB of characters), before the string is built whole.
          reason: 'over the parse limits: more than 67108864 characters',
        },
      },
      expect.objectContaining({ conversation: expect.objectContaining({ conversation_id: 'fine' }) }),
    ]);
  }, 60_000);

  it('fails a truncated export with where it broke, after the conversations before it', async () => {
    const whole = JSON.stringify([
      { id: 'one', mapping: {} },
      { id: 'two', mapping: {} },
    ]);
    const cut = whole.indexOf('{"id":"two"');
    // Streamed: the first conversation arrives before the bytes that break.
    const stream = Readable.from(
      (async function* () {
        yield Buffer.from(whole.slice(0, cut));
        await new Promise((resolve) => setTimeout(resolve, 50));
        yield Buffer.from(whole.slice(cut, cut + 8));
      })(),
    );
    const items: ParsedItem[] = [];
    await expect(async () => {
      for await (const item of parseChatGpt(stream, 'conversations.json', defaultParseLimits))
        items.push(item);
    }).rejects.toThrow(
      /conversations\.json is not a valid ChatGPT export after 1 conversations \(truncated or corrupt JSON\)/,
    );
    expect(items).toHaveLength(1);
  });

  it('fails a JSON export with invalid UTF-8, and rejects only the bad line of a JSONL file', async () => {
    const bad = Buffer.concat([
      Buffer.from('[{"id":"a","title":"'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('"}]'),
    ]);
    await expect(all(parseChatGpt(fromText(bad), 'conversations.json', defaultParseLimits))).rejects.toThrow(
      /conversations\.json is not valid UTF-8/,
    );
    const lines = Buffer.concat([
      Buffer.from('{"conversation_id":"ok1","turns":[{"role":"user","text":"hei"}]}\n'),
      Buffer.from('{"conversation_id":"bad","turns":[{"role":"user","text":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}]}\n{"conversation_id":"ok2","turns":[]}\n{"truncated": '),
    ]);
    const items = await all(parseJsonl(fromText(lines), 'x.jsonl', defaultParseLimits));
    expect(
      items.map((item) => ('conversation' in item ? item.conversation.conversation_id : item.rejected)),
    ).toEqual([
      'ok1',
      { conversation_id: 'x.jsonl line 2', reason: 'the line is not valid UTF-8' },
      'ok2',
      { conversation_id: 'x.jsonl line 4', reason: expect.stringMatching(/^invalid JSON/) },
    ]);
  });

  it('reads Teams HTML bodies and Slack markup as text', () => {
    expect(
      htmlToText('<div><p>Hei &amp; hallo</p><blockquote><p>old mail</p></blockquote><p>ny</p></div>'),
    ).toBe('Hei & hallo\n> old mail\nny');
    expect(slackText('See <https://x.no/a|the guide>, <@U123> &amp; <#C1|support>')).toBe(
      'See the guide, @user & #support',
    );
  });

  it('names a file it cannot tell the format of', async () => {
    const file = path.join(directory, 'notes.json');
    await writeFile(file, '{"hello": 1}');
    await expect(detectFormat(await localPackageFiles(file))).rejects.toThrow(
      /cannot tell the format of notes\.json/,
    );
  });
});
