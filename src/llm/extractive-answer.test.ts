import { describe, expect, it } from 'vitest';
import type { TextAnalyzer } from '../search/text-analysis.js';
import { extractiveAnswer, extractiveLabel, noAnswerText } from './extractive-answer.js';

/**
 * A stand-in for the index's analysis (which needs the database; test/chat-answers.test.ts
 * runs the real one): lower-cased words, a few stop words out, every query word of idf 1
 * except those listed as common.
 */
const stopWords = new Set(['the', 'and', 'how', 'does', 'what', 'with', 'for', 'are', 'its', 'into']);
const words = (text: string) =>
  new Set((text.toLowerCase().match(/[\p{L}\p{N}_]{3,}/gu) ?? []).filter((word) => !stopWords.has(word)));
const analyzer =
  (idf: Record<string, number> = {}): TextAnalyzer =>
  async (query, texts) => ({
    query: new Map([...words(query)].map((word) => [word, idf[word] ?? 1])),
    texts: texts.map(words),
  });

const passage = (citation: number, text: string, headingPath: string[] = []) => ({
  citation,
  text,
  headingPath,
});

const quotedLines = (answer: string) => answer.split('\n').slice(1);

describe('the extractive answer', () => {
  it('quotes the best-matching sentences, each with its citation, under a label', async () => {
    const answer = await extractiveAnswer(
      {
        query: 'How are webhook deliveries retried?',
        passages: [
          passage(
            1,
            'Deliveries are signed. Failed webhook deliveries are retried after 1, 5 and 30 minutes.',
          ),
          passage(2, 'The console shows the list. Webhook deliveries are retried by hand from the console.'),
        ],
      },
      analyzer(),
    );
    expect(answer.split('\n')[0]).toBe(extractiveLabel);
    expect(quotedLines(answer)).toEqual([
      'Failed webhook deliveries are retried after 1, 5 and 30 minutes. [1]',
      'Webhook deliveries are retried by hand from the console. [2]',
    ]);
    for (const line of quotedLines(answer)) expect(line).toMatch(/ \[\d+\]$/);
  });

  it('stays within 600 characters and quotes no sentence cut short', async () => {
    const long = (n: number) =>
      `Vacuum number ${n} reclaims storage occupied by dead tuples in tables and indexes of the database, ${'and it keeps going on '.repeat(6)}until done.`;
    const answer = await extractiveAnswer(
      {
        query: 'What does vacuum reclaim?',
        passages: [1, 2, 3, 4, 5].map((n) => passage(n, `${long(n)} ${long(n + 10)}`)),
      },
      analyzer(),
    );
    expect(answer.length).toBeLessThanOrEqual(600);
    expect(quotedLines(answer).length).toBeGreaterThanOrEqual(2);
    for (const line of quotedLines(answer))
      expect(line).toMatch(/^Vacuum number \d+ .* until done\. \[\d\]$/);
  });

  it('leaves no markdown artifacts: headings, emphasis, links, bare table pipes', async () => {
    const answer = await extractiveAnswer(
      {
        query: 'Which broker does the scale-out use?',
        passages: [
          passage(
            1,
            '## Scale-out broker\n\nThe **scale-out** uses a [STOMP broker](docs/broker.md) for its queues.\n\n| Port | Broker |\n|---|---|\n| scale-out | STOMP 1.2 |\n',
            ['Architecture'],
          ),
          passage(2, '| scale-out | broker | done |\n| more | broker | rows |\n\nNothing else.'),
        ],
      },
      analyzer(),
    );
    expect(answer).toContain('The scale-out uses a STOMP broker for its queues. [1]');
    expect(answer).toContain('Port: scale-out; Broker: STOMP 1.2 [1]');
    expect(answer).not.toMatch(/##|\*\*|\]\(|^\s*\|/m);
  });

  it('quotes a sentence once when overlapping segments repeat it, and not its truncated copy', async () => {
    const sentence =
      'Journalled deliveries are leased with their journal row and retried when the lease ends.';
    const answer = await extractiveAnswer(
      {
        query: 'how are journalled deliveries retried',
        passages: [
          passage(1, `${sentence} Other text.`),
          passage(2, `Intro here. ${sentence}`),
          // A segment cut in the middle of the sentence (segments overlap).
          passage(3, `Leased deliveries. ${sentence.replace(' when the lease ends.', ' when the')}`),
        ],
      },
      analyzer(),
    );
    expect(quotedLines(answer).filter((line) => line.includes('journal row'))).toEqual([`${sentence} [1]`]);
  });

  it('brings the code block a quoted sentence leads into, fenced', async () => {
    const answer = await extractiveAnswer(
      {
        query: 'How do I run Weir on a PostgreSQL server with a STOMP broker?',
        passages: [
          passage(
            1,
            'Point every instance at the same PostgreSQL server and STOMP broker, then split the roles:\n\n```sh\nnpx weir serve --role api\nnpx weir serve --role worker\n```\n',
          ),
        ],
      },
      analyzer(),
    );
    expect(quotedLines(answer)).toEqual([
      'Point every instance at the same PostgreSQL server and STOMP broker, then split the roles: [1]',
      '```sh',
      'npx weir serve --role api',
      'npx weir serve --role worker',
      '```',
    ]);
  });

  it("quotes a definition's short paragraph whole when its lead sentence is quoted", async () => {
    const definition =
      '**`length`**\n\nLength of each signature (index entry) in bits. It is rounded up to a multiple of 16. The default is 80 bits.\n\n**`columns`**\n\nNumber of bits for each column. The default is 2 bits.\n';
    // Other segments say more of the question's words than the detail sentence does.
    const rivals = [2, 3, 4].map((n) =>
      passage(n, `The default signature length of a gist index entry is ${n * 8} bytes.`),
    );
    const request = {
      query: 'What is the default signature length of a bloom index entry?',
      passages: [passage(1, definition), ...rivals],
    };
    const answer = await extractiveAnswer(request, analyzer());
    const lines = quotedLines(answer);
    const lead = lines.indexOf('Length of each signature (index entry) in bits. [1]');
    expect(lead).toBeGreaterThanOrEqual(0);
    expect(lines.slice(lead + 1, lead + 3)).toEqual([
      'It is rounded up to a multiple of 16. [1]',
      'The default is 80 bits. [1]',
    ]);
    expect(answer).not.toContain('The default is 2 bits.');
    // A longer paragraph is not quoted whole: its lead is quoted alone.
    const alone = await extractiveAnswer(request, analyzer(), { maxDefinitionCharacters: 60 });
    expect(alone).toContain('Length of each signature (index entry) in bits. [1]');
    expect(alone).not.toContain('The default is 80 bits.');
  });

  it('says the indexed sources do not answer when no unit shares a searched word', async () => {
    const request = {
      query: 'What colour is the sky?',
      passages: [passage(1, '## Sky\n\nTables are stored in files. Indexes are too.')],
    };
    expect(await extractiveAnswer(request, analyzer())).toBe(noAnswerText);
    expect(await extractiveAnswer({ query: 'anything', passages: [] }, analyzer())).toBe(noAnswerText);
    expect(noAnswerText).toMatch(/indexed sources do not answer/);
  });
});
