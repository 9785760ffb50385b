import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LlmServer, startLlmServer } from '../../../test/helpers/llm-server.js';
import { type AdapterTestKit, collectOutputs, createAdapterTestKit } from '../adapter-testing.js';
import { conceptDetection } from './concept-detection.js';
import { storageEnumerator } from './storage-enumerator.js';

describe('knowledge adapters', () => {
  let kit: AdapterTestKit;
  let llm: LlmServer;

  beforeAll(async () => {
    llm = await startLlmServer();
    kit = await createAdapterTestKit({
      withDatabase: true,
      settings: {
        llm_profiles: [
          { name: 'model', provider: 'openai', base_url: llm.baseUrl, model: 'm', timeout_ms: 5000 },
        ],
      } as never,
    });
  });
  afterAll(async () => {
    await kit.close();
    await llm.close();
  });

  it('storage_enumerator lists one message per object by prefix, stage and extension', async () => {
    const put = (key: string, stage: string) =>
      kit.resources.storage.put(key, `# ${key}`, { contentType: 'text/markdown', metadata: { stage } });
    // The test kit's store is not catalogued: write the catalogue rows the way the service does.
    for (const [key, stage] of [
      ['run1/fetch/a.md', 'fetch'],
      ['run1/fetch/b.html', 'fetch'],
      ['run1/other/c.md', 'other'],
      ['run2/fetch/d.md', 'fetch'],
    ] as const)
      await kit.resources.storageCatalogue?.upsert(await put(key, stage));
    const handler = storageEnumerator.create(
      { prefix: 'run1/', extensions: ['.MD'], emit: 'objects', max_objects: 100, stage: undefined } as never,
      kit.resources,
    );
    const outputs = await collectOutputs(await handler({}, kit.context()));
    expect(outputs.map((output) => output.payload.key)).toEqual(['run1/fetch/a.md', 'run1/other/c.md']);
    expect(outputs[0]?.payload).toMatchObject({ content_type: 'text/markdown', stage: 'fetch', size: 17 });
    const byStage = await collectOutputs(await handler({ prefix: '', stage: 'fetch' }, kit.context()));
    expect(byStage.map((output) => output.payload.key)).toEqual(['run1/fetch/a.md', 'run2/fetch/d.md']);
  });

  it('concept_detection with a model keeps only evidence the source contains', async () => {
    await kit.resources.storage.put(
      'run1/fetch/wal.md',
      '# WAL\n\nThe write-ahead log records every change before the data files are written.\n',
      { contentType: 'text/markdown', metadata: { url: 'file:///wal.md' } },
    );
    llm.answer = JSON.stringify({
      concepts: [
        {
          name: 'write-ahead log',
          aliases: ['WAL'],
          score: 0.9,
          evidence: [{ heading: 'WAL', quote: 'The write-ahead log records every change' }],
        },
        { name: 'group commit', score: 0.6, evidence: [{ quote: 'Group commit batches flushes.' }] },
      ],
    });
    const handler = conceptDetection.create(
      {
        llm_profile: 'model',
        max_concepts_per_source: 8,
        content_cutoff: 12000,
        model_concurrency: 1,
        max_source_bytes: 1e6,
      },
      kit.resources,
    );
    const [output] = await collectOutputs(await handler({ key: 'run1/fetch/wal.md' }, kit.context()));
    expect(output?.payload.concepts).toEqual([
      {
        slug: 'write-ahead-log',
        name: 'write-ahead log',
        aliases: ['WAL'],
        score: 0.9,
        evidence: [{ heading_path: ['WAL'], quote: 'The write-ahead log records every change' }],
      },
    ]);
  });
});
