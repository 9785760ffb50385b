/**
 * Issue 34, document-side expansion, simulated (bench:doc-expansion): the service's BM25F
 * keyword ranking with one more, lower-weighted field per segment holding terms the segment
 * does not contain but a reader might use (bench/lib/document-expansions.ts builds them).
 *
 * An expansion lexeme of weight w in a segment counts `fieldWeight x w` occurrences, added to
 * the lexeme's own occurrences (heading ones counted 3 times) before BM25's saturation, as
 * BM25F adds fields. Segment length and the lexeme's document frequency stay those of the
 * segment's own text (the database's query_terms), so an exact match keeps its weight. A
 * segment holding a query lexeme only in its expansion field is a candidate as well.
 *
 * At field weight 0 the ranking is keyword-postings.ts's, to the bit: the same candidate
 * rule, the same sum over the terms in query_terms' order with the same floating-point
 * operations, ties by segment id. bench:doc-expansion checks that against the service.
 */
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../../src/db/schema.js';
import type { KeywordMemoryIndex } from '../../src/search/keyword-memory-index.js';
import type { KeywordHit } from '../../src/search/keyword-postings.js';
import { bm25Defaults, queryTermsSql } from '../../src/search/keyword-sql.js';
import type { LsaIndex } from '../../src/search/lsa-index.js';
import type { LexemeCounts } from '../../src/search/tsvector-text.js';

export interface RankedSegment {
  segmentId: string;
  tokenCount: number;
  language: string;
  executionId: string;
  lexemes: readonly LexemeCounts[];
}

/** Per segment (by its position in the segment list), expansion lexeme -> weight in (0, 1]. */
export type Expansions = ReadonlyArray<ReadonlyMap<string, number> | undefined>;

interface Postings {
  slots: number[];
  values: number[];
}

export class ExpandedKeywordRanking {
  private readonly own = new Map<string, Postings>();
  private expansion = new Map<string, Postings>();
  private fieldWeight = 0;
  private readonly stamp: Int32Array;
  private readonly tf: Float64Array;
  private readonly scores: Float64Array;
  private readonly termStamp: Int32Array;
  private query = 0;
  private termCount = 0;

  constructor(private readonly segments: readonly RankedSegment[]) {
    segments.forEach((segment, slot) => {
      for (const entry of segment.lexemes) {
        const headingWeight = bm25Defaults.headingWeight;
        const tf = entry.occurrences + (headingWeight - 1) * entry.headingOccurrences;
        pushPosting(this.own, entry.lexeme, slot, tf);
      }
    });
    this.stamp = new Int32Array(segments.length);
    this.tf = new Float64Array(segments.length);
    this.termStamp = new Int32Array(segments.length);
    this.scores = new Float64Array(segments.length);
  }

  /** The expansion field in use from now on, and its weight (0: the service's ranking). */
  use(expansions: Expansions, fieldWeight: number): void {
    this.fieldWeight = fieldWeight;
    this.expansion = new Map();
    if (fieldWeight === 0) return;
    expansions.forEach((terms, slot) => {
      for (const [lexeme, weight] of terms ?? []) pushPosting(this.expansion, lexeme, slot, weight);
    });
  }

  /** A KeywordMemoryIndex for the search service: query_terms from the database, ranking here. */
  asIndex(db: Kysely<DatabaseSchema>): KeywordMemoryIndex {
    return {
      ready: async () => {},
      startFilling: () => {},
      size: () => ({ segments: this.segments.length, lexemes: this.own.size, postings: 0, vectors: 0 }),
      // No vectors or rows held: the search statement ranks vectors (exactly: dataDirSearch) and
      // reads the rows.
      nearest: async () => undefined,
      fuse: () => undefined,
      // The reader's copy of a page is read by the search statement's side (addressedSegmentsSql).
      addressed: async () => undefined,
      rank: async (query, filters, depth) => {
        if (query.match === 'all') return undefined;
        const rows = (await queryTermsSql(query).execute(db)).rows;
        const terms = rows.map((row) => ({
          lexeme: row.lexeme,
          weight: Number(row.weight),
          df: Number(row.df),
          idf: Number(row.idf),
          average_length: Number(row.average_length),
        }));
        return this.rank(terms, filters, depth);
      },
    };
  }

  /**
   * The expanded ranking as RRF's third list, in the place the corpus LSA takes
   * (search-service.ts): the service's keyword list stays as it is, and this one, fused at
   * `weight`, adds the segments the expansion field reaches.
   */
  asThirdList(db: Kysely<DatabaseSchema>, weight: number): LsaIndex {
    const index = this.asIndex(db);
    return {
      rank: () => ({ state: 'building' }),
      state: () => 'ready',
      prepare: () => 'ready',
      ready: async () => {},
      lastBuild: () => undefined,
      close: () => {},
      list: async (request) => {
        if (request.keyword.query.match === 'all') return { state: 'match_all' };
        const hits = (await index.rank(request.keyword.query, request.filters, request.keyword.depth)) ?? [];
        return {
          state: 'used',
          lsa: { ranked: hits.map((hit) => ({ segmentId: hit.segmentId, score: hit.raw })), weight },
        };
      },
    };
  }

  rank(
    terms: readonly { lexeme: string; weight: number; df: number; idf: number; average_length: number }[],
    filters: { executionIds: readonly string[] | null; language: string | undefined },
    depth: number,
  ): KeywordHit[] | undefined {
    const p = bm25Defaults;
    const query = ++this.query;
    const executions = filters.executionIds ? new Set(filters.executionIds) : undefined;
    const passes = (slot: number) => {
      const segment = this.segments[slot] as RankedSegment;
      return (
        (!executions || executions.has(segment.executionId)) &&
        (!filters.language || segment.language === filters.language)
      );
    };
    // A lexeme's segments, in its own field and, when used, its expansion field.
    const holding = (lexeme: string) => {
      const slots = [...(this.own.get(lexeme)?.slots ?? [])];
      if (this.fieldWeight > 0) slots.push(...(this.expansion.get(lexeme)?.slots ?? []));
      return slots.filter(passes);
    };
    const found: number[] = [];
    const mark = (slot: number) => {
      if (this.stamp[slot] === query) return;
      this.stamp[slot] = query;
      found.push(slot);
    };
    const own = terms.filter((term) => term.weight === 1);
    const rarest = own.reduce((least, term) => Math.min(least, term.df), Number.POSITIVE_INFINITY);
    if (own.length > 1 && rarest > p.candidateBudget) {
      // The segments holding the two rarest together.
      const [first, second] = own as [(typeof own)[0], (typeof own)[0]];
      const inFirst = new Set(holding(first.lexeme));
      for (const slot of holding(second.lexeme)) if (inFirst.has(slot)) mark(slot);
    } else {
      let before = 0;
      for (const term of terms) {
        if (before + term.df <= p.candidateBudget || before === 0)
          for (const slot of holding(term.lexeme)) mark(slot);
        before += term.df;
      }
    }
    if (found.length > p.maxCandidates) return undefined;
    for (const slot of found) this.scores[slot] = Number.NaN;
    const averageLength = terms[0]?.average_length as number;
    const [k1, k1Plus1, oneMinusB, b] = [p.k1, p.k1 + 1, 1 - p.b, p.b];
    for (const term of terms) {
      const touched: number[] = [];
      const termNumber = ++this.termCount;
      const ownPostings = this.own.get(term.lexeme);
      ownPostings?.slots.forEach((slot, index) => {
        if (this.stamp[slot] !== query) return;
        this.tf[slot] = ownPostings.values[index] as number;
        this.termStamp[slot] = termNumber;
        touched.push(slot);
      });
      const expanded = this.fieldWeight > 0 ? this.expansion.get(term.lexeme) : undefined;
      expanded?.slots.forEach((slot, index) => {
        if (this.stamp[slot] !== query) return;
        const added = this.fieldWeight * (expanded.values[index] as number);
        if (this.termStamp[slot] === termNumber) this.tf[slot] = (this.tf[slot] as number) + added;
        else {
          this.tf[slot] = added;
          this.termStamp[slot] = termNumber;
          touched.push(slot);
        }
      });
      for (const slot of touched) {
        const tf = this.tf[slot] as number;
        const tokens = (this.segments[slot] as RankedSegment).tokenCount;
        const score = (term.idf * tf * k1Plus1) / (tf + k1 * (oneMinusB + (b * tokens) / averageLength));
        this.scores[slot] = Number.isNaN(this.scores[slot] as number)
          ? score
          : (this.scores[slot] as number) + score;
      }
    }
    const hits = found
      .map((slot) => ({
        segmentId: (this.segments[slot] as RankedSegment).segmentId,
        raw: this.scores[slot] as number,
      }))
      .filter((hit) => hit.raw > 0);
    hits.sort((left, right) =>
      left.raw !== right.raw ? right.raw - left.raw : left.segmentId < right.segmentId ? -1 : 1,
    );
    return hits.slice(0, depth);
  }
}

function pushPosting(map: Map<string, Postings>, lexeme: string, slot: number, value: number): void {
  let postings = map.get(lexeme);
  if (!postings) {
    postings = { slots: [], values: [] };
    map.set(lexeme, postings);
  }
  postings.slots.push(slot);
  postings.values.push(value);
}
