/**
 * concept_detection counts how many sources use each word on a run that detects most of the
 * corpus, keeps the counts in the concept map, and weighs words by them on a later run that
 * detects one changed source: "bees", on 13 of the 16 beekeeping pages, is no concept of that
 * page either, though one page alone says nothing about the corpus.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { conceptCorpora } from '../../../test/helpers/concept-labels.js';
import { collectOutputs, createAdapterTestKit } from '../adapter-testing.js';
import { conceptDetection } from './concept-detection.js';
import { conceptMapUpdater } from './concept-map-updater.js';

const kit = await createAdapterTestKit();
afterAll(() => kit.close());

const config = {
  max_concepts_per_source: 16,
  content_cutoff: 12_000,
  model_concurrency: 1,
  max_source_bytes: 1e6,
} as const;

describe('concept_detection on a corpus', () => {
  it('counts the words of a first run, keeps them in the map, and weighs a later run by them', async () => {
    const folder = path.join(conceptCorpora, 'bees');
    const entries = [];
    for (const file of (await readdir(folder)).sort()) {
      const key = `run1/fileshare_fetcher/${file}`;
      const info = await kit.storage.put(key, await readFile(path.join(folder, file)), {
        contentType: 'text/markdown',
      });
      entries.push({
        source_id: `file:///bees/${file}`,
        key,
        content_hash: info.sha256,
        title: null,
        url: null,
        created_at: info.created_at,
      });
    }
    const detect = conceptDetection.create(config, kit.resources);
    const diffKey = async (name: string, diff: Record<string, unknown>) =>
      (await kit.storage.put(`${name}/knowledge_diff/diff.json`, JSON.stringify(diff))).key;
    const firstDiff = await diffKey('run1', {
      knowledge_base: 'bees',
      previous_map_key: null,
      previous_version: 0,
      added: entries,
      changed: [],
      removed: [],
      unchanged: [],
    });
    const [first] = await collectOutputs(await detect({ diff_key: firstDiff }, kit.context()));
    const detections = JSON.parse(
      (await kit.storage.get(first?.payload.detections_key as string)).toString('utf8'),
    );
    expect(detections.corpus_words.documents).toBe(16);
    expect(detections.corpus_words.counts.bee).toBeGreaterThanOrEqual(12);
    const updater = conceptMapUpdater.create(
      {
        min_sources: 2,
        max_corpus_share: 0.5,
        max_concepts: 500,
        max_sources_per_concept: 12,
        related_count: 5,
        merge_similar: false,
        similarity_threshold: 0.92,
      },
      kit.resources,
    );
    const [mapped] = await collectOutputs(
      await updater({ diff_key: firstDiff, detections_key: first?.payload.detections_key }, kit.context()),
    );
    const mapKey = mapped?.payload.map_key as string;
    const map = JSON.parse((await kit.storage.get(mapKey)).toString('utf8'));
    expect(map.corpus_words).toEqual(detections.corpus_words);

    // The second run detects one changed page; alone it would keep "bees".
    const changed = entries.find((entry) => entry.key.endsWith('smoker.md')) as (typeof entries)[number];
    const secondDiff = await diffKey('run2', {
      knowledge_base: 'bees',
      previous_map_key: mapKey,
      previous_version: 1,
      added: [],
      changed: [changed],
      removed: [],
      unchanged: entries.filter((entry) => entry !== changed),
    });
    const [second] = await collectOutputs(await detect({ diff_key: secondDiff }, kit.context()));
    const again = JSON.parse(
      (await kit.storage.get(second?.payload.detections_key as string)).toString('utf8'),
    );
    const names = again.sources[0].detected.map((concept: { name: string }) => concept.name.toLowerCase());
    expect(names).toContain('smoker');
    expect(names).not.toContain('bees');
    expect(again.corpus_words).toEqual(detections.corpus_words);
    const { detectConcepts } = await import('../../consolidation/keyphrases.js');
    const { loadSource } = await import('../../consolidation/sources.js');
    const alone = detectConcepts(await loadSource(kit.storage, changed), { maxConcepts: 16 });
    expect(alone.map((concept) => concept.name.toLowerCase())).toContain('bees');
  });
});
