/**
 * A source deleted at its origin: the file is gone from the share, but the object an earlier
 * run stored stays in storage and in the manifest. knowledge_diff reported it unchanged (or
 * changed), so its concepts and pages kept citing a deleted file.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { conceptMapFormat } from '../../consolidation/concept-map.js';
import { collectOutputs, createAdapterTestKit, memorySyncState } from '../adapter-testing.js';
import { knowledgeDiff } from './knowledge-diff.js';

const share = await mkdtemp(path.join(tmpdir(), 'weir-kdiff-share-'));
const kit = await createAdapterTestKit({ settings: { fileshare_roots: [share] } });
afterAll(async () => {
  await kit.close();
  await rm(share, { recursive: true, force: true });
});

describe('knowledge_diff', () => {
  it('reports a share file deleted at its origin as removed, though its stored object is still listed', async () => {
    await mkdir(path.join(share, 'bees'));
    const files = ['varroa.md', 'brood-box.md'].map((name) => path.join(share, 'bees', name));
    for (const file of files) await writeFile(file, '# page\n');
    const entry = (file: string, run: string) => ({
      source_id: pathToFileURL(file).href,
      key: `${run}/fileshare_fetcher/${path.basename(file)}`,
      content_hash: `hash-${path.basename(file)}`,
      title: path.basename(file),
      url: pathToFileURL(file).href,
      created_at: '2026-11-25T00:00:00Z',
    });
    const sources = Object.fromEntries(
      files.map((file) => [pathToFileURL(file).href, { ...entry(file, 'run1'), detected: [] }]),
    );
    const mapKey = (
      await kit.storage.put(
        'run1/concept_map_updater/concept-map.json',
        JSON.stringify({
          format: conceptMapFormat,
          name: 'bees',
          version: 1,
          created_at: 'x',
          sources,
          concepts: {},
          stale: [],
          removed: [],
        }),
      )
    ).key;
    const syncState = memorySyncState();
    await syncState.put('concept-map bees', [{ key: 'v00000001', value: { map_key: mapKey, version: 1 } }]);
    // The second run: the brood box page was deleted from the share; run 1's objects remain listed.
    await rm(files[1] as string);
    const manifestKey = (
      await kit.storage.put(
        'run2/storage_enumerator/manifest.json',
        JSON.stringify({ objects: files.map((file) => entry(file, 'run1')) }),
      )
    ).key;
    const handler = knowledgeDiff.create({ knowledge_base: 'bees' }, kit.resources);
    const [output] = await collectOutputs(
      await handler({ manifest_key: manifestKey }, kit.context({ syncState })),
    );
    expect(output?.payload).toMatchObject({ added: 0, changed: 0, removed: 1, unchanged: 1 });
    const diff = JSON.parse((await kit.storage.get(output?.payload.diff_key as string)).toString('utf8'));
    expect(diff.removed).toEqual([pathToFileURL(files[1] as string).href]);
  });
});
