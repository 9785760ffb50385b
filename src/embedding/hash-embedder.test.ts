import { describe, expect, it } from 'vitest';
import { createHashEmbedder, fnv1a, hashEmbedding } from './hash-embedder.js';

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

/** The embedding as first written, from feature strings: the in-place hashing must equal it. */
function referenceEmbedding(text: string, dimensions: number): Float32Array {
  const vector = new Float32Array(dimensions);
  const add = (feature: string, weight: number) => {
    const bucket = fnv1a(feature) % dimensions;
    vector[bucket] = (vector[bucket] as number) + (fnv1a(`~${feature}`) & 1 ? 1 : -1) * weight;
  };
  let previous = '';
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []) {
    add(word, 1);
    if (word.length > 3) {
      const padded = `<${word}>`;
      for (let index = 0; index + 3 <= padded.length; index++) add(padded.slice(index, index + 3), 0.25);
    }
    if (previous) add(`${previous} ${word}`, 0.5);
    previous = word;
  }
  let sum = 0;
  for (const value of vector) sum += value * value;
  if (sum === 0) return vector;
  const scale = 1 / Math.sqrt(sum);
  for (let index = 0; index < vector.length; index++) vector[index] = (vector[index] as number) * scale;
  return vector;
}

describe('hash embedder features', () => {
  it('equals the string-built features bit for bit, on words of every length and script', () => {
    const texts = [
      'VACUUM reclaims storage occupied by dead tuples; pg_dump -Fc > out.dump',
      'a an the of to in is ok abc abcd abcde',
      'Norsk tekst: blåbærsyltetøy og ærfugl på Ålesund, 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝒍𝒆𝒕𝒕𝒆𝒓𝒔 😀 x_y_z 12345',
      'Ελληνικά κείμενα και 日本語のテキスト и русский текст',
      '',
    ];
    // A reproducible mix of corpus-like words.
    let seed = 7;
    const alphabet = 'abcdefghijklmnopqrstuvwxyzæøå_0123456789 ';
    for (let count = 0; count < 50; count++) {
      let text = '';
      for (let index = 0; index < 300; index++) {
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
        text += alphabet[seed % alphabet.length];
      }
      texts.push(text);
    }
    for (const dimensions of [8, 384]) {
      for (const text of texts)
        expect(Array.from(hashEmbedding(text, dimensions))).toEqual(
          Array.from(referenceEmbedding(text, dimensions)),
        );
    }
  });
});
