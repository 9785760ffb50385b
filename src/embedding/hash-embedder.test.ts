import { describe, expect, it } from 'vitest';
import { createHashEmbedder } from './hash-embedder.js';

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let index = 0; index < a.length; index++) dot += (a[index] as number) * (b[index] as number);
  return dot;
}

describe('hash embedder', () => {
  it('gives deterministic unit vectors of the configured size', async () => {
    const embedder = createHashEmbedder({ dimensions: 64 });
    const [first, again] = await embedder.embed(['vacuum reclaims storage', 'vacuum reclaims storage']);
    expect(first).toHaveLength(64);
    expect(first).toEqual(again);
    expect(cosine(first as Float32Array, first as Float32Array)).toBeCloseTo(1, 5);
  });

  it('places texts sharing words nearer than unrelated texts', async () => {
    const embedder = createHashEmbedder();
    const [query, related, unrelated] = await embedder.embed([
      'how does vacuum reclaim storage',
      'VACUUM reclaims storage occupied by dead tuples',
      'the weather in Bergen is rainy in November',
    ]);
    expect(cosine(query as Float32Array, related as Float32Array)).toBeGreaterThan(
      cosine(query as Float32Array, unrelated as Float32Array) + 0.2,
    );
  });

  it('returns a zero vector for text without words', async () => {
    const [empty] = await createHashEmbedder({ dimensions: 8 }).embed(['  ... ']);
    expect([...(empty as Float32Array)]).toEqual(new Array(8).fill(0));
  });
});
