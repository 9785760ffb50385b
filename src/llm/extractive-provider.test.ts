import { describe, expect, it } from 'vitest';
import { extractiveAnswer } from './extractive-provider.js';

const passage = (citation: number, text: string) => ({ citation, text }) as never;

describe('extractive answers', () => {
  it('quotes the sentences sharing most words with the question, cited, in passage order', () => {
    const answer = extractiveAnswer({
      query: 'How are webhook deliveries retried?',
      passages: [
        passage(1, 'Deliveries are signed. Failed webhook deliveries are retried after 1, 5 and 30 minutes.'),
        passage(2, 'The console shows deliveries. Nothing else here.'),
      ],
    });
    expect(answer.split('\n').slice(1)).toEqual([
      'Deliveries are signed. [1]',
      'Failed webhook deliveries are retried after 1, 5 and 30 minutes. [1]',
      'The console shows deliveries. [2]',
    ]);
  });

  it('does not quote a sentence twice when overlapping segments repeat it, nor its truncated copy', () => {
    const sentence =
      'Journalled deliveries are leased with their journal row and retried when the lease ends.';
    const answer = extractiveAnswer({
      query: 'how are journalled deliveries retried',
      passages: [
        passage(1, `${sentence} Other text.`),
        passage(2, `Intro. ${sentence}`),
        passage(3, 'Journalled deliveries are leased with their journal row and retried when'),
      ],
    });
    const quoted = answer.split('\n').slice(1);
    expect(quoted.filter((line) => line.startsWith('Journalled deliveries'))).toEqual([`${sentence} [1]`]);
  });
});
