/**
 * Near-duplicate detection (conv_deduplicate): MinHash signatures over word shingles, banded
 * LSH to find candidate pairs without comparing every pair, then each candidate confirmed by
 * the exact Jaccard similarity of the shingle sets. Equal content hashes are exact duplicates.
 */
import { fnv1a } from '../embedding/hash-embedder.js';

export interface DedupItem {
  id: string;
  text: string;
  content_hash: string;
}

export interface DedupOptions {
  /** Jaccard similarity of shingle sets at or above which two texts are duplicates. */
  threshold: number;
  /** Words per shingle. */
  shingleWords: number;
  /** Hash functions per signature; `bands` must divide it. */
  permutations: number;
  bands: number;
}

export const defaultDedupOptions: DedupOptions = {
  threshold: 0.8,
  shingleWords: 3,
  permutations: 64,
  bands: 16,
};

export interface DuplicateGroup {
  /** The member kept: the first of the group in input order. */
  canonical: string;
  duplicates: Array<{ id: string; similarity: number; exact: boolean }>;
}

/** Shingle hashes of a text: sorted, unique (so Jaccard is a merge of two arrays). */
export function shingles(text: string, words: number): Uint32Array {
  const tokens = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const hashes = new Set<number>();
  if (tokens.length < words) {
    if (tokens.length > 0) hashes.add(fnv1a(tokens.join(' ')));
  } else {
    for (let index = 0; index + words <= tokens.length; index++)
      hashes.add(fnv1a(tokens.slice(index, index + words).join(' ')));
  }
  return Uint32Array.from(hashes).sort();
}

export function jaccard(a: Uint32Array, b: Uint32Array): number {
  if (a.length === 0 && b.length === 0) return 1;
  let i = 0;
  let j = 0;
  let shared = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as number;
    const y = b[j] as number;
    if (x === y) {
      shared++;
      i++;
      j++;
    } else if (x < y) i++;
    else j++;
  }
  return shared / (a.length + b.length - shared);
}

/** MinHash signature: per seeded hash function, the least hash over the shingles. */
export function signature(set: Uint32Array, permutations: number): Uint32Array {
  const result = new Uint32Array(permutations).fill(0xffffffff);
  for (let p = 0; p < permutations; p++) {
    const seed = Math.imul(p + 1, 0x9e3779b1);
    let least = 0xffffffff;
    for (let index = 0; index < set.length; index++) {
      const hashed = mix32((set[index] as number) ^ seed);
      if (hashed < least) least = hashed;
    }
    result[p] = least;
  }
  return result;
}

/** Groups of duplicates among `items`; items in no group are unique. */
export function findDuplicates(
  items: readonly DedupItem[],
  options: DedupOptions = defaultDedupOptions,
): DuplicateGroup[] {
  if (options.permutations % options.bands !== 0) throw new Error('bands must divide permutations');
  const rows = options.permutations / options.bands;
  const parent = items.map((_, index) => index);
  const find = (index: number): number => {
    let root = index;
    while (parent[root] !== root) root = parent[root] as number;
    while (parent[index] !== root) {
      const next = parent[index] as number;
      parent[index] = root;
      index = next;
    }
    return root;
  };
  const similarity = new Map<number, { value: number; exact: boolean }>();
  const link = (a: number, b: number, value: number, exact: boolean) => {
    const [first, second] = a < b ? [a, b] : [b, a];
    const rootA = find(first);
    const rootB = find(second);
    if (rootA !== rootB) parent[Math.max(rootA, rootB)] = Math.min(rootA, rootB);
    const previous = similarity.get(second);
    if (!previous || value > previous.value) similarity.set(second, { value, exact });
  };

  // Exact duplicates first: one content hash, one group.
  const byHash = new Map<string, number>();
  items.forEach((item, index) => {
    const first = byHash.get(item.content_hash);
    if (first === undefined) byHash.set(item.content_hash, index);
    else link(first, index, 1, true);
  });

  const sets = items.map((item) => shingles(item.text, options.shingleWords));
  const signatures: Array<Uint32Array | undefined> = [];
  const buckets = new Map<string, number[]>();
  /** Per item, its bucket in each band (exact copies have none). */
  const bucketsOf: Array<number[][] | undefined> = [];
  items.forEach((item, index) => {
    if (byHash.get(item.content_hash) !== index) return; // exact copies are settled
    const sig = signature(sets[index] as Uint32Array, options.permutations);
    signatures[index] = sig;
    const own: number[][] = [];
    for (let band = 0; band < options.bands; band++) {
      const key = `${band}:${Array.from(sig.subarray(band * rows, (band + 1) * rows)).join(',')}`;
      const bucket = buckets.get(key) ?? [];
      if (bucket.length === 0) buckets.set(key, bucket);
      bucket.push(index);
      own.push(bucket);
    }
    bucketsOf[index] = own;
  });
  // Similar texts that are not duplicates (one template, different details) share bands
  // often; the signatures' agreement estimates their Jaccard for 64 comparisons, so only
  // pairs that could reach the threshold get the exact (longer) comparison.
  const estimateFloor = Math.max(0, options.threshold - 0.2);
  let agreeing = 0; // the fewest agreeing hash functions whose share reaches the floor
  while (agreeing < options.permutations && agreeing / options.permutations < estimateFloor) agreeing++;
  // A pair sharing several buckets gets its exact comparison once, in the first of them the
  // loop reaches: buckets are visited in the order they were made, by their first member, then
  // by band. (Not a set of the pairs seen: on templated texts it held tens of millions of
  // pairs, and cost more than the rest together.) The union-find and the estimate may see a
  // pair again: both give the same answer the second time.
  const order = (bucket: number[], band: number) => (bucket[0] as number) * options.bands + band;
  const judgedBefore = (a: number, b: number, bucket: number[], band: number): boolean => {
    const sigA = signatures[a] as Uint32Array;
    const sigB = signatures[b] as Uint32Array;
    const own = bucketsOf[a] as number[][];
    const here = order(bucket, band);
    for (let other = 0; other < options.bands; other++) {
      if (other === band) continue;
      const shared = own[other] as number[];
      if (order(shared, other) >= here) continue;
      let same = true;
      for (let row = other * rows; row < (other + 1) * rows && same; row++) same = sigA[row] === sigB[row];
      if (same) return true;
    }
    return false;
  };
  for (const [key, bucket] of buckets) {
    if (bucket.length < 2) continue;
    const band = Number(key.slice(0, key.indexOf(':')));
    for (let i = 0; i < bucket.length; i++) {
      for (let j = i + 1; j < bucket.length; j++) {
        const a = bucket[i] as number;
        const b = bucket[j] as number;
        if (find(a) === find(b)) continue;
        if (!agreeAtLeast(signatures[a] as Uint32Array, signatures[b] as Uint32Array, agreeing)) continue;
        if (judgedBefore(a, b, bucket, band)) continue;
        const value = jaccard(sets[a] as Uint32Array, sets[b] as Uint32Array);
        if (value >= options.threshold) link(a, b, value, false);
      }
    }
  }

  const groups = new Map<number, number[]>();
  items.forEach((_, index) => {
    const root = find(index);
    const members = groups.get(root);
    if (members) members.push(index);
    else groups.set(root, [index]);
  });
  const result: DuplicateGroup[] = [];
  for (const [root, members] of groups) {
    if (members.length < 2) continue;
    result.push({
      canonical: items[root]?.id as string,
      duplicates: members
        .filter((index) => index !== root)
        .map((index) => {
          const found = similarity.get(index) ?? { value: 1, exact: true };
          return { id: items[index]?.id as string, similarity: round(found.value), exact: found.exact };
        }),
    });
  }
  return result;
}

/**
 * Whether two signatures agree on at least `needed` hash functions (their share estimates the
 * Jaccard similarity); stops once too many disagree.
 */
function agreeAtLeast(a: Uint32Array, b: Uint32Array, needed: number): boolean {
  const allowed = a.length - needed;
  let differing = 0;
  for (let index = 0; index < a.length; index++)
    if (a[index] !== b[index] && ++differing > allowed) return false;
  return true;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/** MurmurHash3's finaliser: a cheap, well-mixed 32-bit permutation. */
function mix32(value: number): number {
  let h = value >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
