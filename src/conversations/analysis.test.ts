import { describe, expect, it } from 'vitest';
import { generateConversations } from '../../test/helpers/conversation-fixtures.js';
import { createHashEmbedder } from '../embedding/hash-embedder.js';
import { clusterVectors } from './clustering.js';
import { cleanTurnText, compactConversation } from './compact.js';
import { clusterKeywords } from './keywords.js';
import { adjustedRandIndex, precisionRecall, purity } from './metrics.js';
import { defaultDedupOptions, findDuplicates, jaccard, shingles } from './minhash.js';
import { loadNorwegianClassifier } from './norwegian.js';
import { discoverRoutine, routineId } from './routines.js';

const fixture = generateConversations({ seed: 11, count: 600 });
const compacted = fixture.map((conversation) => ({
  truth: conversation.truth,
  compact: compactConversation({ ...conversation, source_format: 'jsonl' }),
}));

describe('compaction', () => {
  it('drops quoted replies, signatures and system turns, and counts what is left', () => {
    expect(cleanTurnText('Yes, that works.\n> earlier message\nOn Monday Kari wrote:\nold text')).toBe(
      'Yes, that works.',
    );
    expect(cleanTurnText('Takk for svaret.\n\nMed vennlig hilsen\nKari Nordmann\n+47 900 00 000')).toBe(
      'Takk for svaret.',
    );
    const compact = compactConversation({
      conversation_id: 'c',
      source_format: 'jsonl',
      turns: [
        { role: 'system', text: 'Kari joined the channel' },
        { role: 'user', text: 'Hvordan bytter jeg passord?', at: '2025-01-02T10:00:00.000Z' },
        { role: 'assistant', text: 'Gå til innstillinger.\n--\nHelpdesk', at: '2025-01-02T10:01:00.000Z' },
      ],
    });
    expect(compact).toMatchObject({
      text: 'user: Hvordan bytter jeg passord?\nassistant: Gå til innstillinger.',
      turn_count: 2,
      roles: ['assistant', 'user'],
      started_at: '2025-01-02T10:00:00.000Z',
      ended_at: '2025-01-02T10:01:00.000Z',
    });
    expect(compact.token_count).toBe(13);
    expect(compact.content_hash).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('near-duplicate detection', () => {
  it('finds the copies the fixture made, exact and near, and few others', () => {
    const long = compacted.filter(({ truth }) => !truth.short);
    const groups = findDuplicates(
      long.map(({ compact }) => ({
        id: compact.conversation_id,
        text: compact.text,
        content_hash: compact.content_hash,
      })),
    );
    const truthOf = new Map(long.map(({ compact, truth }) => [compact.conversation_id, truth]));
    const root = (id: string) => truthOf.get(id)?.duplicate_of ?? id;
    let truePositives = 0;
    let falsePositives = 0;
    for (const group of groups)
      for (const duplicate of group.duplicates) {
        if (root(duplicate.id) === root(group.canonical)) truePositives++;
        else falsePositives++;
        if (truthOf.get(duplicate.id)?.exact_duplicate) expect(duplicate.exact).toBe(true);
      }
    const copies = long.filter(({ truth }) => truth.duplicate_of).length;
    const result = precisionRecall(truePositives, falsePositives, copies - truePositives);
    expect(copies).toBeGreaterThan(20);
    expect(result.f1).toBeGreaterThanOrEqual(0.95);
  });

  it('groups exactly the conversations an all-pairs comparison links, however many bands a pair shares', () => {
    // The fixture's templates put hundreds of conversations in one band's bucket, and copies
    // share most of their bands: each pair must be judged, once is enough.
    const items = compacted
      .filter(({ truth }) => !truth.short)
      .map(({ compact }) => ({
        id: compact.conversation_id,
        text: compact.text,
        content_hash: compact.content_hash,
      }));
    const sets = items.map((item) => shingles(item.text, defaultDedupOptions.shingleWords));
    const parent = items.map((_, index) => index);
    const find = (index: number): number => (parent[index] === index ? index : find(parent[index] as number));
    for (let a = 0; a < items.length; a++)
      for (let b = a + 1; b < items.length; b++)
        if (
          items[a]?.content_hash === items[b]?.content_hash ||
          jaccard(sets[a] as Uint32Array, sets[b] as Uint32Array) >= defaultDedupOptions.threshold
        )
          parent[Math.max(find(a), find(b))] = Math.min(find(a), find(b));
    const expected = new Map<number, string[]>();
    items.forEach((item, index) => {
      expected.set(find(index), [...(expected.get(find(index)) ?? []), item.id]);
    });
    const groups = findDuplicates(items).map((group) =>
      [group.canonical, ...group.duplicates.map((duplicate) => duplicate.id)].sort(),
    );
    const all = [...expected.values()]
      .filter((members) => members.length > 1)
      .map((members) => members.sort());
    expect(all.length).toBeGreaterThan(20);
    expect(groups.sort()).toEqual(all.sort());
  });
});

describe('topic clusters, labels and routines', () => {
  const norwegian = compacted.filter(
    ({ truth }) => (truth.language === 'nb' || truth.language === 'nn') && !truth.short,
  );

  it('clusters Norwegian conversations by topic with the offline embedder, and labels them', async () => {
    const vectors = await createHashEmbedder().embed(norwegian.map(({ compact }) => compact.text));
    const result = clusterVectors(vectors);
    const topics = norwegian.map(({ truth }) => truth.topic);
    expect(adjustedRandIndex(topics, result.labels)).toBeGreaterThanOrEqual(0.7);
    expect(purity(topics, result.labels)).toBeGreaterThanOrEqual(0.9);
    // Same input, same clusters.
    expect(clusterVectors(vectors).labels).toEqual(result.labels);
    const documents = Array.from({ length: result.k }, (_, label) =>
      norwegian.filter((_, index) => result.labels[index] === label).map(({ compact }) => compact.text),
    );
    const keywords = clusterKeywords(documents, { top: 5, minDocuments: 3 });
    const passwordCluster = result.labels[
      norwegian.findIndex(({ truth }) => truth.topic === 'password-reset')
    ] as number;
    expect(keywords[passwordCluster]?.map((keyword) => keyword.term).join(' ')).toMatch(/passord/);
    // Names and ticket numbers each conversation has alone never become labels.
    for (const list of keywords) for (const { term } of list) expect(term).not.toMatch(/^\d/);
  });

  it('recovers a topic routine: its steps in order, precondition and outcome', () => {
    const password = norwegian.filter(({ truth }) => truth.topic === 'password-reset');
    const routine = discoverRoutine(
      password.map(({ compact }) => ({ conversation_id: compact.conversation_id, turns: compact.turns })),
    );
    expect(routine?.steps.map((step) => step.text)).toHaveLength(4);
    expect(routine?.steps[0]?.text).toMatch(/«Glemt passord»/);
    expect(routine?.steps[3]?.text).toMatch(/passord .*tolv/);
    expect(routine?.preconditions[0]).toMatch(/tilgang til e-postadressen/);
    expect(routine?.outcome).toMatch(/logge inn med det nye passordet/);
    expect(routine?.conversation_ids.length).toBeGreaterThan(password.length / 2);
    expect(routineId(routine?.steps ?? [])).toBe(routineId([...(routine?.steps ?? [])]));
  });

  it('tells Norwegian from Danish and Swedish, and leaves one-liners undetermined', async () => {
    const classify = await loadNorwegianClassifier();
    expect(classify('ok takk').verdict).toBe('undetermined');
    // Close calls between Norwegian and Danish: spellings only one language uses decide.
    expect(classify('Hvordan skriver jeg en rekursiv spørring med WITH RECURSIVE?')).toMatchObject({
      verdict: 'norwegian',
    });
    expect(classify('Hvordan skriver jeg en rekursiv forespørgsel med WITH RECURSIVE?')).toMatchObject({
      verdict: 'other',
      language: 'da',
    });
    const verdicts = compacted
      .filter(({ truth }) => !truth.short)
      .map(({ truth, compact }) => ({ truth, verdict: classify(compact.text).verdict }));
    const norwegian = (language: string) => language === 'nb' || language === 'nn';
    const truePositives = verdicts.filter(
      (v) => norwegian(v.truth.language) && v.verdict === 'norwegian',
    ).length;
    const falsePositives = verdicts.filter(
      (v) => !norwegian(v.truth.language) && v.verdict === 'norwegian',
    ).length;
    const falseNegatives = verdicts.filter(
      (v) => norwegian(v.truth.language) && v.verdict !== 'norwegian',
    ).length;
    expect(precisionRecall(truePositives, falsePositives, falseNegatives).f1).toBeGreaterThanOrEqual(0.95);
  });
});

describe('metrics', () => {
  it('scores identical partitions 1 and unrelated ones near 0', () => {
    expect(adjustedRandIndex(['a', 'a', 'b', 'b'], [1, 1, 0, 0])).toBe(1);
    expect(adjustedRandIndex(['a', 'a', 'b', 'b'], [1, 0, 1, 0])).toBeLessThan(0);
    expect(purity(['a', 'a', 'b', 'b'], [0, 0, 0, 0])).toBe(0.5);
    expect(precisionRecall(8, 2, 0)).toMatchObject({ precision: 0.8, recall: 1, f1: 0.8889 });
  });
});
