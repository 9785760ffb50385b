import { describe, expect, it } from 'vitest';
import { answerUnits, splitSentences } from './answer-units.js';

describe('splitSentences', () => {
  it('ends sentences at . ! ? but not after abbreviations, initials or inside numbers', () => {
    expect(
      splitSentences(
        'Pick a profile, e.g. the default one, i.e. extractive. Version 2.5 ships now! Does it? Yes. J. Smith wrote it, cf. the notes etc. and more.',
      ),
    ).toEqual([
      'Pick a profile, e.g. the default one, i.e. extractive.',
      'Version 2.5 ships now!',
      'Does it?',
      'Yes.',
      'J. Smith wrote it, cf. the notes etc. and more.',
    ]);
  });

  it('starts a sentence at a code span and joins wrapped lines', () => {
    expect(splitSentences('Run it first.\n`npx weir serve` then\nstarts the service.')).toEqual([
      'Run it first.',
      '`npx weir serve` then starts the service.',
    ]);
  });
});

describe('answerUnits', () => {
  it('never quotes headings, but reads the units below them in their context, the first opening the section', () => {
    const units = answerUnits('# Storage\n\n## S3\n\nObjects go to the bucket. They keep their keys.\n');
    expect(units).toEqual([
      {
        kind: 'sentence',
        text: 'Objects go to the bucket.',
        headings: ['Storage', 'S3'],
        opensSection: true,
      },
      {
        kind: 'sentence',
        text: 'They keep their keys.',
        headings: ['Storage', 'S3'],
        previous: 'Objects go to the bucket.',
      },
    ]);
  });

  it('names the sentence each one follows in its paragraph, and none across paragraphs', () => {
    const units = answerUnits('One starts here. Two follows it.\n\nThree opens a paragraph.\n');
    expect(units.map((unit) => (unit.kind === 'sentence' ? unit.previous : 'not a sentence'))).toEqual([
      undefined,
      'One starts here.',
      undefined,
    ]);
  });

  it('quotes a table row with its header, and leaves out a table without one', () => {
    const units = answerUnits(
      'Ports:\n\n| Port | State |\n|---|---|\n| **Broker** | both done |\n| S3 | `STORAGE_URL` |\n',
    );
    expect(units.filter((unit) => unit.kind === 'row').map((unit) => unit.text)).toEqual([
      'Port: Broker; State: both done',
      'Port: S3; State: `STORAGE_URL`',
    ]);
    // A segment that starts inside a table: bare pipe lines, no header row.
    expect(answerUnits('| S3 | not yet |\n| Broker | done |\n\nThe end is here.')).toEqual([
      { kind: 'sentence', text: 'The end is here.', headings: [] },
    ]);
  });

  it('keeps a code block whole, as code with its language', () => {
    const units = answerUnits(
      'Split the roles:\n\n```sh\nnpx weir serve --role api\nnpx weir serve --role worker\n```\n',
    );
    expect(units[1]).toEqual({
      kind: 'code',
      language: 'sh',
      text: 'npx weir serve --role api\nnpx weir serve --role worker',
      headings: [],
    });
  });

  it('removes inline markdown: emphasis, links, images and HTML, keeping code spans', () => {
    const [unit] = answerUnits(
      'The **hash** model ([docs](docs/x.md)) is _offline_ ![logo](l.png) <b>and</b> `free`.',
    );
    expect(unit?.text).toBe('The hash model (docs) is offline and `free`.');
  });

  it("reads a list item's lead as the subject of its other sentences", () => {
    const units = answerUnits(
      '- `MaxWords`, `MinWords` (integers): they bound headlines. The defaults are 35 and 15.\n',
    );
    expect(units[1]).toEqual({
      kind: 'sentence',
      text: 'The defaults are 35 and 15.',
      headings: [],
      subject: '`MaxWords`, `MinWords` (integers)',
      previous: '`MaxWords`, `MinWords` (integers): they bound headlines.',
    });
  });

  it('quotes list items as sentences', () => {
    expect(answerUnits('- First item here.\n- Second item, with more.\n').map((unit) => unit.text)).toEqual([
      'First item here.',
      'Second item, with more.',
    ]);
  });

  it("drops a segment's first words when they start mid-sentence and its last when they stop mid-sentence", () => {
    const units = answerUnits(
      'continues the previous segment. A whole sentence here. And one that is cut in',
    );
    expect(units.map((unit) => unit.text)).toEqual(['A whole sentence here.']);
    // After a heading the first words open a sentence, even in lower case (a command's name).
    expect(
      answerUnits('## Exit Status\n\npg_isready returns 0 when the server accepts connections.'),
    ).toEqual([
      {
        kind: 'sentence',
        text: 'pg_isready returns 0 when the server accepts connections.',
        headings: ['Exit Status'],
        opensSection: true,
      },
    ]);
  });

  it('marks only the first sentence right under a heading as opening its section', () => {
    const units = answerUnits(
      'Before any heading.\n\n## smart_segmenter\n\nSplits markdown. Into segments.\n\nA second paragraph.\n\n' +
        '## Output\n\n| Field | Type |\n|---|---|\n| `segments` | array |\n\nAfter the table.\n',
    );
    expect(
      units.filter((unit) => unit.kind === 'sentence' && unit.opensSection).map((unit) => unit.text),
    ).toEqual(['Splits markdown.']);
  });
});
