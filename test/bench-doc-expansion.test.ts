import { describe, expect, it } from 'vitest';
import {
  corpusStatistics,
  type ExpansionSegment,
  inboundLabels,
  neighbourExpansions,
  reverseGlossary,
} from '../bench/lib/document-expansions.js';
import { ExpandedKeywordRanking, type RankedSegment } from '../bench/lib/expanded-keyword-ranking.js';
import { KeywordPostings } from '../src/search/keyword-postings.js';

// bench:doc-expansion's stand-in for the keyword index (issue 34, document-side expansion): at
// field weight 0 it must rank as the service's in-memory index does, and with a weight an
// expansion term must reach segments without letting them pass an exact match.
type Segment = RankedSegment & ExpansionSegment;

function segment(id: number, page: string, index: number, counts: Record<string, [number, number]>): Segment {
  return {
    segmentId: `00000000-0000-0000-0000-${String(id).padStart(12, '0')}`,
    documentId: page,
    segmentIndex: index,
    url: `http://127.0.0.1/${page}.html`,
    text: '',
    tokenCount: 20 + 7 * (id % 5),
    language: 'english',
    executionId: 'execution',
    lexemes: Object.entries(counts).map(([lexeme, [occurrences, headingOccurrences]]) => ({
      lexeme,
      occurrences,
      headingOccurrences,
    })),
  };
}

const words = ['vacuum', 'tupl', 'dead', 'index', 'recurs', 'tree', 'queri', 'lock', 'tabl', 'row'];
const corpus: Segment[] = Array.from({ length: 60 }, (_, id) => {
  const counts: Record<string, [number, number]> = {};
  words.forEach((word, position) => {
    const occurrences = (id * (position + 3) + position) % 7;
    if (occurrences > 0) counts[word] = [occurrences, position % 3 === 0 ? Math.min(1, occurrences) : 0];
  });
  return segment(id, `page-${Math.floor(id / 4)}`, id % 4, counts);
});

function queryTerms(lexemes: readonly string[], weights: readonly number[] = []) {
  const n = corpus.length;
  const averageLength = corpus.reduce((sum, entry) => sum + entry.tokenCount, 0) / n;
  return lexemes
    .map((lexeme, index) => {
      const df = corpus.filter((entry) => entry.lexemes.some((held) => held.lexeme === lexeme)).length;
      const weight = weights[index] ?? 1;
      return {
        lexeme,
        weight,
        df,
        idf: weight * Math.log(1 + (n - df + 0.5) / (df + 0.5)),
        n,
        average_length: averageLength,
      };
    })
    .filter((term) => term.df > 0)
    .sort(
      (a, b) => Number(a.weight < 1) - Number(b.weight < 1) || a.df - b.df || (a.lexeme < b.lexeme ? -1 : 1),
    );
}

describe('bench:doc-expansion keyword ranking', () => {
  const filters = { executionIds: null, language: undefined };

  it('ranks as the in-memory keyword index at field weight 0, even with expansions given', () => {
    const postings = new KeywordPostings();
    for (const entry of corpus) postings.add(entry);
    const ranking = new ExpandedKeywordRanking(corpus);
    const expansions = corpus.map(() => new Map([['vacuum', 1]]));
    ranking.use(expansions, 0);
    for (const query of [
      ['vacuum', 'dead', 'tupl'],
      ['tree', 'lock'],
      ['lock', 'row', 'tabl', 'queri'],
    ]) {
      const terms = queryTerms(query, [1, 1, 0.3]);
      const expected = postings.rank(terms, filters, 20);
      expect(expected.hits?.length).toBeGreaterThan(0);
      expect(ranking.rank(terms, filters, 20)).toEqual(expected.hits);
    }
  });

  it('makes a segment holding a term only in its expansion field a candidate, below an exact match', () => {
    const ranking = new ExpandedKeywordRanking(corpus);
    const holder = corpus.find(
      (entry) => !entry.lexemes.some((held) => held.lexeme === 'tree') && entry.lexemes.length > 0,
    ) as Segment;
    const expansions = corpus.map((entry) => (entry === holder ? new Map([['tree', 1]]) : undefined));
    const terms = queryTerms(['tree']);
    ranking.use(expansions, 0);
    expect(ranking.rank(terms, filters, 100)?.map((hit) => hit.segmentId)).not.toContain(holder.segmentId);
    ranking.use(expansions, 0.2);
    const hits = ranking.rank(terms, filters, 100) ?? [];
    expect(hits.at(-1)?.segmentId).toBe(holder.segmentId);
    expect(hits.length).toBe(
      corpus.filter((entry) => entry.lexemes.some((held) => held.lexeme === 'tree')).length + 1,
    );
  });
});

describe('document expansions', () => {
  it("adds the salient terms of a segment's page neighbours that it lacks", () => {
    const page = [
      segment(1, 'p', 0, { vacuum: [3, 1], dead: [1, 0] }),
      segment(2, 'p', 1, { dead: [2, 0], tupl: [2, 0] }),
      segment(3, 'q', 0, { index: [1, 0], vacuum: [1, 0], tupl: [1, 0] }),
    ];
    const expansions = neighbourExpansions(page, corpusStatistics(page), 10);
    expect([...(expansions[0] ?? [])]).toEqual([['tupl', 1]]);
    expect([...(expansions[1] ?? [])]).toEqual([['vacuum', 1]]);
    expect(expansions[2]?.size).toBe(0);
  });

  it("reads inbound links to the same site only, with the words around them on the link's line", () => {
    const from = {
      ...segment(1, 'bookindex', 0, {}),
      url: 'http://127.0.0.1/bookindex.html',
      text: 'hierarchical queries, [WITH Queries](http://127.0.0.1/queries-with.html#X)\n[Elsewhere](https://example.org/queries-with.html) [self](bookindex.html)',
    };
    expect(inboundLabels([from])).toEqual(new Map([['queries-with.html', ['WITH Queries']]]));
    const [label] = inboundLabels([from], 60).get('queries-with.html') ?? [];
    expect(label?.split(/\s+/).filter(Boolean)).toEqual(['hierarchical', 'queries,', 'WITH', 'Queries']);
  });

  it("gives an English lexeme its glossary words' forms, the first translation at full weight", () => {
    const glossary = new Map([
      ['slette', ['delete', 'drop']],
      ['fjerne', ['remove', 'delete']],
      ['server', ['server']],
    ]);
    const englishOf = new Map<string, string[]>([
      ['delete', ['delet']],
      ['drop', ['drop']],
      ['remove', ['remov']],
      ['server', ['server']],
      ['slette', ['slett']],
      ['sletter', ['sletter']],
      ['fjerne', ['fjern']],
      ['servere', ['server']],
    ]);
    const norwegianOf = new Map([
      ['slette', ['slett']],
      ['fjerne', ['fjern']],
      ['server', ['serv']],
    ]);
    const reverse = reverseGlossary(glossary, englishOf, norwegianOf, (lexeme) => lexeme === 'server');
    expect(reverse.get('delet')).toEqual(
      new Map([
        ['slett', 1],
        ['sletter', 1],
        ['fjern', 0.5],
      ]),
    );
    expect(reverse.get('drop')?.get('slett')).toBe(0.5);
    // A form that is a common English word of the index is not added as Norwegian.
    expect(reverse.get('server')).toEqual(new Map([['serv', 1]]));
  });
});
