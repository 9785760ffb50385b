import { describe, expect, it } from 'vitest';
import { type MapSource, updateConceptMap } from './concept-map.js';
import type { DetectedConcept } from './keyphrases.js';

const concept = (name: string, score = 1, aliases: string[] = []): DetectedConcept => ({
  slug: name.toLowerCase().replace(/\W+/g, '-'),
  name,
  aliases,
  score,
  evidence: [{ heading_path: [], quote: `${name} is described here.` }],
});

const source = (id: string, hash: string, concepts: DetectedConcept[]): MapSource => ({
  source_id: id,
  key: `k/${id}`,
  content_hash: hash,
  title: id,
  url: null,
  created_at: '2026-11-25T00:00:00Z',
  detected: concepts,
});

const options = { minSources: 2 };

describe('concept map', () => {
  it('merges plural and case variants and aliases into one concept, dropping single-source phrases', async () => {
    const map = await updateConceptMap(
      undefined,
      {
        name: 'kb',
        createdAt: 'now',
        detected: [
          source('a', 'h1', [concept('Replication Slots'), concept('WAL', 0.5)]),
          source('b', 'h2', [concept('replication slot'), concept('Write-Ahead Log', 0.8, ['WAL'])]),
          source('c', 'h3', [concept('checkpoint'), concept('lonely phrase')]),
        ],
        removed: [],
      },
      options,
    );
    expect(Object.keys(map.concepts).sort()).toEqual(['replication-slot', 'write-ahead-log']);
    expect(map.concepts['write-ahead-log']?.sources.map((s) => s.source_id).sort()).toEqual(['a', 'b']);
    expect(map.concepts['replication-slot']?.related).toEqual(['write-ahead-log']);
    expect(map.stale.sort()).toEqual(['replication-slot', 'write-ahead-log']);
  });

  it('marks stale only the concepts whose sources changed, keeps slugs, and drops removed sources', async () => {
    const first = await updateConceptMap(
      undefined,
      {
        name: 'kb',
        createdAt: 'now',
        detected: [
          source('a', 'h1', [concept('autovacuum'), concept('checkpoint')]),
          source('b', 'h2', [concept('autovacuum')]),
          source('c', 'h3', [concept('checkpoint')]),
          source('d', 'h4', [concept('checkpoint'), concept('autovacuum')]),
        ],
        removed: [],
      },
      options,
    );
    // c changes (its checkpoint section), d goes away.
    const second = await updateConceptMap(
      first,
      {
        name: 'kb',
        createdAt: 'later',
        detected: [source('c', 'h3-changed', [concept('Checkpoints')])],
        removed: ['d'],
      },
      options,
    );
    expect(second.version).toBe(2);
    expect(Object.keys(second.sources).sort()).toEqual(['a', 'b', 'c']);
    expect(second.concepts.checkpoint?.name).toBe('checkpoint');
    expect(second.stale.sort()).toEqual(['autovacuum', 'checkpoint']);
    for (const entry of Object.values(second.concepts))
      expect(entry.sources.map((s) => s.source_id)).not.toContain('d');
    // Nothing changed: nothing stale.
    const third = await updateConceptMap(
      second,
      { name: 'kb', createdAt: 'then', detected: [], removed: [] },
      options,
    );
    expect(third.stale).toEqual([]);
    expect(third.concepts.autovacuum?.changed_in).toBe(2);
  });

  it('reports a concept that lost its sources as removed', async () => {
    const first = await updateConceptMap(
      undefined,
      {
        name: 'kb',
        createdAt: 'now',
        detected: [source('a', 'h1', [concept('vacuum')]), source('b', 'h2', [concept('vacuum')])],
        removed: [],
      },
      options,
    );
    const second = await updateConceptMap(
      first,
      { name: 'kb', createdAt: 'later', detected: [], removed: ['b'] },
      options,
    );
    expect(second.concepts).toEqual({});
    expect(second.removed).toEqual([{ slug: 'vacuum', name: 'vacuum' }]);
  });

  it.each([
    20, 200, 1169,
  ])("keeps a corpus's main concepts with the default max_corpus_share, on %i pages, and drops what every page says", async (pages) => {
    // A beekeeping corpus: main concepts on one page in 8, 5, 4 and 3 (12 % to 33 %), minor
    // ones on two pages each, and a phrase on nearly every page (a footer, "this page").
    const everyNth: Array<[string, number]> = [
      ['varroa mite', 8],
      ['honey super', 5],
      ['queen cells', 4],
      ['brood box', 3],
    ];
    const detected = Array.from({ length: pages }, (_, index) => {
      const found = everyNth.filter(([, nth]) => index % nth === 0).map(([name]) => concept(name, 2));
      found.push(concept(`minor topic ${Math.floor(index / 2)}`, 0.5), concept('this page', 0.3));
      if (index % 20 === 0) found.pop(); // a few pages without the filler
      return source(`p${index}`, `h${index}`, found);
    });
    const map = await updateConceptMap(undefined, { name: 'bees', createdAt: 'now', detected, removed: [] });
    const names = Object.values(map.concepts).map((found) => found.name);
    expect(names).toEqual(expect.arrayContaining(['varroa mite', 'brood box', 'honey super', 'queen cells']));
    expect(names).not.toContain('this page');
  });
});
