import { describe, expect, it } from 'vitest';
import { extractiveDraft } from './concept-page.js';
import type { Passage } from './passages.js';

const passage = (citation: number, text: string): Passage => ({
  citation,
  source_id: `file:///bees/${citation}.md`,
  key: `run/fetch/${citation}.md`,
  title: `Page ${citation}`,
  url: null,
  heading_path: [],
  text,
});

describe('extractive pages', () => {
  it('quotes the sentence before one that opens on a pronoun, and leaves out a passage opening that points outside it', () => {
    const draft = extractiveDraft(
      { name: 'hive tool', aliases: [] },
      [
        passage(
          1,
          'A hive tool is a flat steel bar with a hooked end. Beekeepers pry frames apart with the hive tool every inspection. It is also used to scrape wax and propolis from the frames.',
        ),
        passage(
          2,
          'They are sold in two lengths. The hive tool should be cleaned in washing soda between hives.',
        ),
      ],
      [],
    );
    const texts = [draft?.summary.text, ...(draft?.sections[0]?.paragraphs.map((point) => point.text) ?? [])];
    expect(texts).toContain(
      'Beekeepers pry frames apart with the hive tool every inspection. It is also used to scrape wax and propolis from the frames.',
    );
    expect(texts.filter((text) => text?.startsWith('It ') || text?.startsWith('They '))).toEqual([]);
    expect(texts.join(' ')).not.toContain('They are sold in two lengths');
    expect(texts.join(' ')).not.toContain('inner cover');
  });
});
