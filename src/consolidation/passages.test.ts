import { describe, expect, it } from 'vitest';
import { selectPassages } from './passages.js';
import { type LoadedSource, sectionsOf } from './sources.js';

const source = (id: string, markdown: string): LoadedSource => ({
  source_id: id,
  key: `k/${id}`,
  title: id,
  url: null,
  markdown,
  sections: sectionsOf(markdown),
});

describe('passages of a concept', () => {
  it('takes the sections that name the concept, in turns across sources, within the budget', () => {
    const a = source(
      'a',
      '# A\n\nThe checkpointer writes dirty buffers.\n\n## Tuning\n\nA checkpoint every five minutes is the default; checkpoint spacing matters.\n\n## Other\n\nNothing here.',
    );
    const b = source('b', '# B\n\nEach checkpoint is logged when log_checkpoints is on.');
    const passages = selectPassages(['checkpoint'], [a, b], { maxPerSource: 2 });
    expect(
      passages.map((passage) => [passage.citation, passage.source_id, passage.heading_path.at(-1)]),
    ).toEqual([
      [1, 'a', 'Tuning'],
      [2, 'b', 'B'],
    ]);
    expect(selectPassages(['checkpoint'], [a, b], { tokenBudget: 5 })).toHaveLength(1);
  });

  it("falls back on detection's quote when no section names the concept, only while the source holds it", () => {
    const quote = 'Durable logging of changes comes first.';
    const b = source('b', `# B\n\n${quote} Then the data files.`);
    const evidence = [{ heading_path: ['B'], quote }];
    expect(selectPassages(['write-ahead log'], [{ ...b, evidence }])).toEqual([
      expect.objectContaining({ citation: 1, source_id: 'b', text: quote, heading_path: ['B'] }),
    ]);
    const changed = source('b', '# B\n\nSomething else entirely.');
    expect(selectPassages(['write-ahead log'], [{ ...changed, evidence }])).toEqual([]);
  });
});
