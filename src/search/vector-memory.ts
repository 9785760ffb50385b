/**
 * One embedding model's vectors in memory (issue 35): the embedded search ranks them exactly,
 * every vector scored, instead of asking PGlite's HNSW index (one statement at a time, the
 * largest share of an RRF query's database time once the keyword ranking moved to memory).
 *
 * The distance is pgvector's cosine distance computed as pgvector computes it: float32 sums of
 * float32 products, in dimension order, then `1 - dot / sqrt(|a|^2 * |b|^2)` in double, kept
 * within [-1, 1]. Math.fround after each product and each sum gives the same float32 rounding
 * as C, so the distances equal the database's `<=>` to the last bit (vector-memory.test.ts
 * checks them against PGlite's), and the ranking (ties by segment id) is the exact SQL scan's.
 *
 * Vectors are held by column (a Float32Array per dimension, a value per slot): a query reads
 * only the columns of its non-zero dimensions, a fifth of them for a question under the
 * offline hash embedder (8,565 x 384 floats in 13 MB). A removed segment leaves its slot dead
 * until dead slots outnumber live ones, then the columns are compacted.
 */

import { type Float32Store, float32Store } from './float32-axpy.js';

export interface VectorHit {
  segmentId: string;
  /** pgvector's cosine distance (`<=>`). */
  distance: number;
}

export class ModelVectors {
  /** The dots, then one column per dimension, `capacity` float32s each, in one store (float32-axpy.ts). */
  private store: Float32Store;
  /** One column per dimension, a value per slot: a query reads only its non-zero dimensions' columns. */
  private columns: Float32Array[];
  /** Each row's float32 sum of squares, summed as pgvector sums it. */
  private norms: Float32Array;
  /** Dot products of the current query, one per slot (float32, as pgvector accumulates). */
  private dots: Float32Array;
  private slotSegment: (string | undefined)[] = [];
  private slotExecution: string[] = [];
  private readonly bySegment = new Map<string, number>();
  private live = 0;

  /** `simd: false` keeps the scalar loop (tests compare the two). */
  constructor(
    readonly dimensions: number,
    private readonly simd = true,
  ) {
    this.store = float32Store(256 * (dimensions + 1), simd);
    this.dots = this.store.floats.subarray(0, 256);
    this.columns = Array.from({ length: dimensions }, (_, d) =>
      this.store.floats.subarray((d + 1) * 256, (d + 2) * 256),
    );
    this.norms = new Float32Array(256);
  }

  get size(): number {
    return this.live;
  }

  /** Holds a segment's vector, replacing the one it had. */
  set(segmentId: string, executionId: string, vector: ArrayLike<number>): void {
    if (vector.length !== this.dimensions) {
      throw new Error(`a ${vector.length}-dimension vector for a ${this.dimensions}-dimension model`);
    }
    let slot = this.bySegment.get(segmentId);
    if (slot === undefined) {
      slot = this.slotSegment.length;
      this.ensureCapacity(slot + 1);
      this.slotSegment.push(segmentId);
      this.slotExecution.push(executionId);
      this.bySegment.set(segmentId, slot);
      this.live++;
    } else {
      this.slotExecution[slot] = executionId;
    }
    for (let d = 0; d < this.dimensions; d++) (this.columns[d] as Float32Array)[slot] = vector[d] as number;
    this.norms[slot] = sumOfSquares(vector, this.dimensions);
  }

  /** Drops a segment's vector, if held. */
  remove(segmentId: string): void {
    const slot = this.bySegment.get(segmentId);
    if (slot === undefined) return;
    this.bySegment.delete(segmentId);
    this.slotSegment[slot] = undefined;
    this.live--;
    if (this.slotSegment.length > 1024 && this.live * 2 < this.slotSegment.length) this.compact();
  }

  /**
   * The `depth` nearest vectors that pass `accepts` (segment id, the embedding's execution id),
   * nearest first, ties by segment id: the SQL statement's exact ranking.
   */
  nearest(
    query: Float32Array,
    depth: number,
    accepts?: (segmentId: string, executionId: string) => boolean,
  ): VectorHit[] {
    const { dimensions, columns, norms, slotSegment } = this;
    const dots = this.dots;
    const slots = slotSegment.length;
    // Whole groups of four slots (the capacity is a multiple of 4): SIMD reads four at a time.
    const span = Math.ceil(slots / 4) * 4;
    dots.fill(0, 0, span);
    const { axpy } = this.store;
    // Dimension by dimension in pgvector's order; a zero of the query adds (+/-)0 to every
    // sum, which changes no float32 sum's value, so only its non-zero dimensions are read.
    for (let d = 0; d < dimensions; d++) {
      const value = query[d] as number;
      if (value === 0) continue;
      const column = columns[d] as Float32Array;
      if (axpy) {
        axpy(dots.byteOffset, column.byteOffset, span, value);
        continue;
      }
      for (let slot = 0; slot < slots; slot++) {
        dots[slot] = Math.fround((dots[slot] as number) + Math.fround((column[slot] as number) * value));
      }
    }
    const queryNorm = sumOfSquares(query, dimensions);
    const best: VectorHit[] = [];
    for (let slot = 0; slot < slots; slot++) {
      const segmentId = slotSegment[slot];
      if (segmentId === undefined) continue;
      const distance = cosineDistance(dots[slot] as number, norms[slot] as number, queryNorm);
      if (best.length === depth && !precedes(distance, segmentId, best[depth - 1] as VectorHit)) continue;
      if (accepts && !accepts(segmentId, this.slotExecution[slot] as string)) continue;
      insertSorted(best, { segmentId, distance }, depth);
    }
    return best;
  }

  private ensureCapacity(slots: number): void {
    if (slots <= this.norms.length) return;
    // A quarter more at a time: doubling would leave up to half the columns empty (13 MB held for 8,565 x 384).
    this.resize(Math.max(slots, Math.ceil(this.norms.length * 1.25)));
  }

  private resize(slots: number): void {
    const capacity = Math.ceil(slots / 4) * 4;
    const keep = Math.min(capacity, this.norms.length);
    const store = float32Store(capacity * (this.dimensions + 1), this.simd);
    this.columns = this.columns.map((column, d) => {
      const moved = store.floats.subarray((d + 1) * capacity, (d + 2) * capacity);
      moved.set(column.subarray(0, keep));
      return moved;
    });
    this.store = store;
    this.dots = store.floats.subarray(0, capacity);
    const norms = new Float32Array(capacity);
    norms.set(this.norms.subarray(0, keep));
    this.norms = norms;
  }

  /** Moves the live slots to the front, in slot order, and frees the rest. */
  private compact(): void {
    let next = 0;
    for (let slot = 0; slot < this.slotSegment.length; slot++) {
      const segmentId = this.slotSegment[slot];
      if (segmentId === undefined) continue;
      if (next !== slot) {
        for (const column of this.columns) column[next] = column[slot] as number;
        this.norms[next] = this.norms[slot] as number;
        this.slotSegment[next] = segmentId;
        this.slotExecution[next] = this.slotExecution[slot] as string;
        this.bySegment.set(segmentId, next);
      }
      next++;
    }
    this.slotSegment.length = next;
    this.slotExecution.length = next;
    this.resize(Math.max(256, Math.ceil(next * 1.25)));
  }
}

/** pgvector's cosine_distance from the float32 dot product and sums of squares. */
function cosineDistance(dot: number, normA: number, normB: number): number {
  let similarity = dot / Math.sqrt(normA * normB);
  if (similarity > 1) similarity = 1;
  else if (similarity < -1) similarity = -1;
  return 1 - similarity;
}

/** The float32 sum of squares; each value first rounded to float32, as the column holds it (a real[] read back is a decimal). */
function sumOfSquares(values: ArrayLike<number>, dimensions: number): number {
  let sum = 0;
  for (let d = 0; d < dimensions; d++) {
    const value = Math.fround(values[d] as number);
    sum = Math.fround(sum + Math.fround(value * value));
  }
  return sum;
}

/** Nearer first, ties by segment id; NaN (a zero vector) after every number, as PostgreSQL sorts it. */
function precedes(distance: number, segmentId: string, other: VectorHit): boolean {
  const mine = Number.isNaN(distance) ? Number.POSITIVE_INFINITY : distance;
  const theirs = Number.isNaN(other.distance) ? Number.POSITIVE_INFINITY : other.distance;
  return mine < theirs || (mine === theirs && segmentId < other.segmentId);
}

/** Inserts a hit into a list kept sorted and at most `depth` long. */
function insertSorted(best: VectorHit[], hit: VectorHit, depth: number): void {
  let position = best.length;
  while (position > 0 && precedes(hit.distance, hit.segmentId, best[position - 1] as VectorHit)) position--;
  best.splice(position, 0, hit);
  if (best.length > depth) best.length = depth;
}
