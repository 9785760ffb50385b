/**
 * The offline default embedder: feature hashing of word unigrams, character trigrams of each
 * word and word bigrams into a fixed number of signed buckets, then L2-normalised. No model,
 * no download, deterministic; texts that share words and word pieces land near each other, so
 * vector search and RRF behave sensibly on a fresh install. Swap in a real model
 * (`openai` or `onnx` provider) for semantic similarity.
 */
import type { Embedder } from './embedder.js';
import { normalize } from './embedder.js';

export function createHashEmbedder(options: { name?: string; dimensions?: number } = {}): Embedder {
  const dimensions = options.dimensions ?? 384;
  return {
    name: options.name ?? 'hash',
    provider: 'hash',
    dimensions,
    maxBatchSize: 1024,
    // Lexical (shared words and word pieces), so it repeats the keyword evidence. Against BM25
    // keyword ranking it only pulled RRF down: at 0.5, RRF MRR@10 was 0.759 against keyword's
    // 0.879 on the PostgreSQL-docs questions. Chosen on the question set's dev split among 0.1,
    // 0.05 and 0.02: at 0.05 it breaks near-ties (docs/benchmarks.md).
    rrfWeight: 0.05,
    async embed(texts) {
      return texts.map((text) => hashEmbedding(text, dimensions));
    },
  };
}

export function hashEmbedding(text: string, dimensions: number): Float32Array {
  const vector = new Float32Array(dimensions);
  const words = text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  // Each feature is hashed from code units in place, both hashes in one pass, and a bigram
  // continues from its first word's hash states: building the feature strings (a slice per
  // trigram, a concatenation per bigram and per sign hash) and hashing each from its start
  // cost most of the embedder's time at ingestion. The features, their order and the hashes
  // are those of fnv1a over `word`, the trigrams of `<word>` and `previous word`.
  let previousHash = 0;
  let previousSign = 0;
  let hasPrevious = false;
  for (const word of words) {
    const length = word.length;
    if (padded.length < length + 2) padded = new Uint16Array(length + 2);
    padded[0] = LESS_THAN;
    let hash = FNV_OFFSET;
    let sign = TILDE_STATE;
    for (let index = 0; index < length; index++) {
      const unit = word.charCodeAt(index);
      padded[index + 1] = unit;
      hash = Math.imul(hash ^ unit, FNV_PRIME);
      sign = Math.imul(sign ^ unit, FNV_PRIME);
    }
    padded[length + 1] = GREATER_THAN;
    add(vector, hash, sign, 1);
    if (length > 3) {
      for (let start = 0; start + 3 <= length + 2; start++) {
        const a = padded[start] as number;
        const b = padded[start + 1] as number;
        const c = padded[start + 2] as number;
        add(
          vector,
          Math.imul(Math.imul(Math.imul(FNV_OFFSET ^ a, FNV_PRIME) ^ b, FNV_PRIME) ^ c, FNV_PRIME),
          Math.imul(Math.imul(Math.imul(TILDE_STATE ^ a, FNV_PRIME) ^ b, FNV_PRIME) ^ c, FNV_PRIME),
          0.25,
        );
      }
    }
    if (hasPrevious) {
      let pairHash = Math.imul(previousHash ^ SPACE, FNV_PRIME);
      let pairSign = Math.imul(previousSign ^ SPACE, FNV_PRIME);
      for (let index = 1; index <= length; index++) {
        const unit = padded[index] as number;
        pairHash = Math.imul(pairHash ^ unit, FNV_PRIME);
        pairSign = Math.imul(pairSign ^ unit, FNV_PRIME);
      }
      add(vector, pairHash, pairSign, 0.5);
    }
    previousHash = hash;
    previousSign = sign;
    hasPrevious = true;
  }
  return normalize(vector);
}

/** `<word>` as code units, reused from word to word (grown for a longer one). */
let padded = new Uint16Array(64);

const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;
const LESS_THAN = '<'.charCodeAt(0);
const GREATER_THAN = '>'.charCodeAt(0);
const SPACE = ' '.charCodeAt(0);
/** FNV-1a's state after `~`: the sign hash of a feature is fnv1a(`~${feature}`). */
const TILDE_STATE = Math.imul(FNV_OFFSET ^ '~'.charCodeAt(0), FNV_PRIME);

/**
 * Adds `weight` to the feature's bucket (its FNV-1a hash `hash`), signed by the low bit of its
 * second hash `sign` (fnv1a of `~feature`): colliding features do not only ever add up.
 */
function add(vector: Float32Array, hash: number, sign: number, weight: number): void {
  const bucket = (hash >>> 0) % vector.length;
  vector[bucket] = (vector[bucket] as number) + (sign & 1 ? 1 : -1) * weight;
}

/** 32-bit FNV-1a over UTF-16 code units: fast and well spread for short strings. */
export function fnv1a(text: string): number {
  let hash = FNV_OFFSET;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, FNV_PRIME);
  }
  return hash >>> 0;
}
