import { describe, expect, it } from 'vitest';
import { headingField, searchableText } from './searchable-text.js';

describe('searchableText', () => {
  it('keeps link text and drops link and image targets', () => {
    expect(
      searchableText(
        'See [Routine Vacuuming](http://127.0.0.1/docs/routine-vacuuming.html "Vacuum") and ![a diagram](img/x(1).png).',
      ),
    ).toBe('See [Routine Vacuuming] and ![a diagram].');
  });

  it('drops reference definitions and autolinks, and undoes markdown escapes', () => {
    const text = 'Run pg\\_dump \\*now\\* <https://example.org/a_b>\n[ref]: https://example.org/ref\nend';
    expect(searchableText(text)).toBe('Run pg_dump *now* \n\nend');
  });

  it('leaves text without links alone', () => {
    expect(searchableText('```sql\nselect (1);\n```')).toBe('```sql\nselect (1);\n```');
  });
});

describe('headingField', () => {
  it('adds the title when the heading path does not start with it', () => {
    expect(headingField(['Install', 'On Debian'], 'Weir')).toBe('Weir Install On Debian');
    expect(headingField([], 'Weir')).toBe('Weir');
  });

  it('does not repeat a title the first heading already holds', () => {
    expect(headingField(['25.1. Routine Vacuuming', 'Basics'], 'Routine Vacuuming')).toBe(
      '25.1. Routine Vacuuming Basics',
    );
    expect(headingField(['Pipelines'], undefined)).toBe('Pipelines');
  });
});
