import { Value } from 'typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashEmbedding } from '../../embedding/hash-embedder.js';
import { type AdapterTestKit, collectOutputs, createAdapterTestKit } from '../adapter-testing.js';
import { embeddingGenerator } from './embedding-generator.js';

let kit: AdapterTestKit;
beforeAll(async () => {
  kit = await createAdapterTestKit({
    withDatabase: true,
    settings: {
      embedding_models: [
        { name: 'hash', provider: 'hash', dimensions: 32 },
        { name: 'hash-small', provider: 'hash', dimensions: 8 },
      ],
    },
  });
});
afterAll(async () => {
  await kit.close();
});

const document = {
  source_key: 'https://docs.example.org/vacuum',
  url: 'https://docs.example.org/vacuum',
  title: 'Vacuum',
  language: 'english',
};
const segment = (text: string) => ({ text, token_count: 5, heading_path: ['Vacuum'] });

function create(config: object) {
  const withDefaults = Value.Default(embeddingGenerator.config, structuredClone(config)) as never;
  return embeddingGenerator.create(withDefaults, kit.resources);
}

describe('embedding_generator', () => {
  it('indexes the segment, embeds it with every model and writes each vector', async () => {
    const handler = create({ models: ['hash', 'hash-small'] });
    const context = kit.context({ stage: 'embed', metadata: { document } });
    const outputs = await collectOutputs(
      await handler({ segment: segment('VACUUM reclaims storage'), segment_index: 0, total: 1 }, context),
    );
    expect(outputs.map((output) => output.payload.model)).toEqual(['hash', 'hash-small']);
    const [first, second] = outputs;
    expect(first?.payload.segment_id).toBe(second?.payload.segment_id);
    expect(first?.batchIndex).toBeUndefined();
    const key = first?.payload.vector_storage_key as string;
    expect(key).toBe(`${context.executionId}/embed/${first?.payload.segment_id}.hash.f32`);
    const bytes = await kit.storage.get(key);
    const vector = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
    expect(Array.from(vector)).toEqual(Array.from(hashEmbedding('VACUUM reclaims storage', 32)));
    expect((await kit.storage.stat(key))?.metadata).toMatchObject({
      model: 'hash',
      dimensions: 32,
      segment_id: first?.payload.segment_id,
    });

    const db = kit.database?.db;
    if (!db) throw new Error('no database');
    const rows = await db
      .selectFrom('knowledge_embeddings')
      .select(['model', 'dimensions', 'vector_storage_key'])
      .orderBy('model')
      .execute();
    expect(rows).toEqual([
      { model: 'hash', dimensions: 32, vector_storage_key: key },
      { model: 'hash-small', dimensions: 8, vector_storage_key: second?.payload.vector_storage_key },
    ]);
    expect(await db.selectFrom('knowledge_segments').select('text').execute()).toEqual([
      { text: 'VACUUM reclaims storage' },
    ]);
  });

  it('answers each message of a batch by its index', async () => {
    const handler = create({});
    const messages = ['one', 'two', 'three'].map((text, index) => ({
      message_id: `m${index}`,
      correlation_id: 'c',
      payload: { segment: segment(`segment ${text}`), segment_index: index, total: 3 },
      metadata: { document: { ...document, source_key: 'https://docs.example.org/batch' } },
    }));
    const outputs = await collectOutputs(
      await handler({ batch_id: 'b1', messages }, kit.context({ stage: 'embed' })),
    );
    expect(outputs.map((output) => [output.batchIndex, output.payload.model])).toEqual([
      [0, 'hash'],
      [1, 'hash'],
      [2, 'hash'],
    ]);
    expect(new Set(outputs.map((output) => output.payload.segment_id)).size).toBe(3);

    // The same message twice in one batch (a redelivery) is answered twice and stored once.
    const twice = await collectOutputs(
      await handler(
        { batch_id: 'b2', messages: [messages[0], messages[0]] },
        kit.context({ stage: 'embed' }),
      ),
    );
    expect(twice.map((output) => output.batchIndex)).toEqual([0, 1]);
    expect(twice[0]?.payload).toEqual(twice[1]?.payload);
  });

  it('refuses an unknown model at creation, and bad input or a missing document per message', async () => {
    expect(() => create({ models: ['hash', 'ada-002'] })).toThrow(
      /model ada-002 is not configured; embedding_models has hash, hash-small/,
    );
    const handler = create({});
    await expect(
      handler({ segment: segment('x'), segment_index: 0, total: 1 }, kit.context()),
    ).rejects.toThrow(/needs metadata.document/);
    await expect(
      handler({ segment: 'x', segment_index: 0, total: 1 }, kit.context({ metadata: { document } })),
    ).rejects.toThrow(/input segment is not a segment/);
    await expect(
      handler({ segment: segment('x'), segment_index: 3, total: 1 }, kit.context({ metadata: { document } })),
    ).rejects.toThrow(/segment_index. below .total/);
  });
});
