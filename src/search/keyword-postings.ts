/**
 * The keyword index in memory: per lexeme, the segments holding it with their occurrence
 * counts (all positions, and those of weight A: title and headings), and per segment its
 * token count, language and execution. It ranks a query exactly as keyword-sql.ts does in the
 * database, given the database's query_terms (queryTermsSql: lexemes, weights, document
 * frequencies, IDF and corpus figures, which must agree with what it holds): the same
 * candidate selection under the postings budget, the same BM25F sum in the same order of
 * terms and the same floating-point operations, and ties broken by segment id. Where the SQL
 * path would cut candidates at `maxCandidates` in index order (an order only the database
 * knows), or the statistics disagree, `rank` answers undefined and the caller asks the database.
 *
 * Deleting a segment leaves its postings in place, skipped as dead, until a lexeme's list is
 * half dead (then that list is compacted) or dead slots outnumber live ones (then every list
 * is renumbered), so a re-indexed page costs its own lexemes, not a scan of long lists.
 */
import { type Bm25Parameters, bm25Defaults, type KeywordFilters, type QueryTerm } from './keyword-sql.js';
import type { LexemeCounts } from './tsvector-text.js';

export interface IndexedSegment {
  segmentId: string;
  documentId: string;
  tokenCount: number;
  language: string;
  executionId: string;
  lexemes: readonly LexemeCounts[];
}

export interface KeywordHit {
  segmentId: string;
  raw: number;
}

interface Term extends QueryTerm {
  id: number;
}

export type RankOutcome =
  | { hits: KeywordHit[] }
  /** More candidates than maxCandidates: only the database knows which it would score. */
  | { hits: undefined; reason: 'candidates' }
  /** The database's statistics are not what this index holds: it missed a write. */
  | { hits: undefined; reason: 'stale' };

export class KeywordPostings {
  private readonly lexemeIds = new Map<string, number>();
  private postingSlots: Int32Array[] = [];
  /** occurrences * 65536 + heading occurrences, beside each posting's slot. */
  private postingCounts: Int32Array[] = [];
  private postingLength: number[] = [];
  private postingDead: number[] = [];
  private documentFrequency: number[] = [];

  private slotSegment: (string | undefined)[] = [];
  private slotDocument: (string | undefined)[] = [];
  private slotTokens: number[] = [];
  private slotLanguage: string[] = [];
  private slotExecution: string[] = [];
  private slotLexemes: (Int32Array | undefined)[] = [];
  private readonly bySegment = new Map<string, number>();
  private readonly byDocument = new Map<string, Set<number>>();
  /** Shared copies of the few distinct languages and execution ids. */
  private readonly interned = new Map<string, string>();

  private segments = 0;
  private tokens = 0;
  private deadSlots = 0;
  private stamp = new Int32Array(0);
  private scores = new Float64Array(0);
  private queryNumber = 0;

  get size(): { segments: number; lexemes: number; postings: number } {
    let postings = 0;
    for (const frequency of this.documentFrequency) postings += frequency;
    return { segments: this.segments, lexemes: this.lexemeIds.size, postings };
  }

  /** Adds a segment, replacing the one of the same id. */
  add(segment: IndexedSegment): void {
    this.remove(segment.segmentId);
    const slot = this.slotSegment.length;
    const ids = new Int32Array(segment.lexemes.length);
    segment.lexemes.forEach((entry, index) => {
      const id = this.lexemeId(entry.lexeme);
      ids[index] = id;
      this.append(id, slot, entry.occurrences * 65536 + entry.headingOccurrences);
      this.documentFrequency[id] = (this.documentFrequency[id] ?? 0) + 1;
    });
    this.slotSegment.push(segment.segmentId);
    this.slotDocument.push(segment.documentId);
    this.slotTokens.push(segment.tokenCount);
    this.slotLanguage.push(this.intern(segment.language));
    this.slotExecution.push(this.intern(segment.executionId));
    this.slotLexemes.push(ids);
    this.bySegment.set(segment.segmentId, slot);
    const slots = this.byDocument.get(segment.documentId) ?? new Set<number>();
    slots.add(slot);
    this.byDocument.set(segment.documentId, slots);
    this.segments++;
    this.tokens += segment.tokenCount;
  }

  /** Removes a segment, if held. */
  remove(segmentId: string): void {
    const slot = this.bySegment.get(segmentId);
    if (slot === undefined) return;
    this.bySegment.delete(segmentId);
    const documentId = this.slotDocument[slot] as string;
    const slots = this.byDocument.get(documentId);
    slots?.delete(slot);
    if (slots?.size === 0) this.byDocument.delete(documentId);
    this.slotSegment[slot] = undefined;
    this.slotDocument[slot] = undefined;
    for (const id of this.slotLexemes[slot] ?? []) {
      this.documentFrequency[id] = (this.documentFrequency[id] as number) - 1;
      this.postingDead[id] = (this.postingDead[id] as number) + 1;
      const length = this.postingLength[id] as number;
      if (length >= 16 && (this.postingDead[id] as number) * 2 > length) this.compactList(id);
    }
    this.slotLexemes[slot] = undefined;
    this.segments--;
    this.tokens -= this.slotTokens[slot] as number;
    this.deadSlots++;
    if (this.deadSlots > 1024 && this.deadSlots > this.segments) this.renumber();
  }

  /** Removes every segment of these documents. */
  removeDocuments(documentIds: readonly string[]): void {
    for (const documentId of documentIds) {
      for (const slot of [...(this.byDocument.get(documentId) ?? [])]) {
        const segmentId = this.slotSegment[slot];
        if (segmentId !== undefined) this.remove(segmentId);
      }
    }
  }

  /**
   * The best `depth` segments for the query's terms (the rows of queryTermsSql, in its order),
   * best first; or why the database must rank (see the module comment).
   */
  rank(
    queryTerms: readonly QueryTerm[],
    filters: KeywordFilters,
    depth: number,
    parameters?: Partial<Bm25Parameters>,
  ): RankOutcome {
    const p = { ...bm25Defaults, ...parameters };
    const terms = this.terms(queryTerms);
    if (terms === undefined) return { hits: undefined, reason: 'stale' };
    const candidates = this.candidates(terms, filters, p);
    if (candidates === undefined) return { hits: undefined, reason: 'candidates' };
    const query = this.queryNumber;
    const { scores, stamp, slotTokens } = this;
    const averageLength = terms[0]?.average_length as number;
    const [k1, k1Plus1, oneMinusB, b] = [p.k1, p.k1 + 1, 1 - p.b, p.b];
    // Each candidate's sum runs over the terms in query_terms' order, as the database's does.
    for (const term of terms) {
      const slots = this.postingSlots[term.id] as Int32Array;
      const counts = this.postingCounts[term.id] as Int32Array;
      const length = this.postingLength[term.id] as number;
      for (let index = 0; index < length; index++) {
        const slot = slots[index] as number;
        if (stamp[slot] !== query) continue;
        const packed = counts[index] as number;
        const tf = Math.floor(packed / 65536) + (p.headingWeight - 1) * (packed % 65536);
        const score =
          (term.idf * tf * k1Plus1) /
          (tf + k1 * (oneMinusB + (b * (slotTokens[slot] as number)) / averageLength));
        scores[slot] = Number.isNaN(scores[slot] as number) ? score : (scores[slot] as number) + score;
      }
    }
    const hits = candidates.map((slot) => ({
      segmentId: this.slotSegment[slot] as string,
      raw: scores[slot] as number,
    }));
    hits.sort((left, right) =>
      left.raw !== right.raw ? right.raw - left.raw : left.segmentId < right.segmentId ? -1 : 1,
    );
    return { hits: hits.slice(0, depth) };
  }

  /**
   * The BM25F score of each of these segments for the query's terms (queryTermsSql's rows, in
   * its order), as `rank` scores a candidate, with no candidate selection: 0 for a segment that
   * holds none of them. Undefined when the statistics disagree with the database's (stale).
   */
  score(
    queryTerms: readonly QueryTerm[],
    segmentIds: readonly string[],
    parameters?: Partial<Bm25Parameters>,
  ): Map<string, number> | undefined {
    const p = { ...bm25Defaults, ...parameters };
    const terms = this.terms(queryTerms);
    if (terms === undefined) return undefined;
    const averageLength = terms[0]?.average_length as number;
    const scores = new Map<string, number>();
    // A few segments: each term's count is found by a binary search of its postings (kept in
    // slot order), not by the scan of every posting that ranking the whole index takes.
    for (const segmentId of segmentIds) {
      const slot = this.bySegment.get(segmentId);
      if (slot === undefined) continue;
      let score = Number.NaN;
      for (const term of terms) {
        const packed = this.postingCount(term.id, slot);
        if (packed === undefined) continue;
        const part = this.termScore(term, packed, slot, averageLength, p);
        score = Number.isNaN(score) ? part : score + part;
      }
      scores.set(segmentId, Number.isNaN(score) ? 0 : score);
    }
    return scores;
  }

  /** A term's BM25F part for one posting (packed counts) of a slot. */
  private termScore(
    term: Term,
    packed: number,
    slot: number,
    averageLength: number,
    p: Bm25Parameters,
  ): number {
    const tf = Math.floor(packed / 65536) + (p.headingWeight - 1) * (packed % 65536);
    return (
      (term.idf * tf * (p.k1 + 1)) /
      (tf + p.k1 * (1 - p.b + (p.b * (this.slotTokens[slot] as number)) / averageLength))
    );
  }

  /** A slot's packed counts in a lexeme's postings (in slot order: slots are only appended, and compaction keeps their order). */
  private postingCount(id: number, slot: number): number | undefined {
    const slots = this.postingSlots[id] as Int32Array;
    let low = 0;
    let high = (this.postingLength[id] as number) - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const found = slots[middle] as number;
      if (found === slot) return (this.postingCounts[id] as Int32Array)[middle] as number;
      if (found < slot) low = middle + 1;
      else high = middle - 1;
    }
    return undefined;
  }

  /** The database's terms with this index's lexeme ids; undefined when N or a frequency differs from the database's. */
  private terms(queryTerms: readonly QueryTerm[]): Term[] | undefined {
    const terms: Term[] = [];
    for (const term of queryTerms) {
      const id = this.lexemeIds.get(term.lexeme);
      if (id === undefined || this.documentFrequency[id] !== term.df) return undefined;
      const n = Math.max(this.segments, 1);
      if (term.n !== n || term.average_length !== Math.max(this.tokens, 1) / n) return undefined;
      terms.push({ ...term, id });
    }
    return terms;
  }

  /**
   * The candidate slots (stamped with this query's number), or undefined past maxCandidates.
   * keyword-sql.ts's rule: the two rarest query lexemes together when even the rarest is over
   * the budget; else every lexeme whose postings fit the budget after those before it, and
   * the first whatever its size.
   */
  private candidates(
    terms: readonly Term[],
    filters: KeywordFilters,
    p: Bm25Parameters,
  ): number[] | undefined {
    const query = this.nextQuery();
    const own = terms.filter((term) => term.weight === 1);
    const rarest = own.reduce((least, term) => Math.min(least, term.df), Number.POSITIVE_INFINITY);
    const executions = filters.executionIds ? new Set(filters.executionIds) : undefined;
    const passes = (slot: number) =>
      this.slotSegment[slot] !== undefined &&
      (!executions || executions.has(this.slotExecution[slot] as string)) &&
      (!filters.language || this.slotLanguage[slot] === filters.language);
    const found: number[] = [];
    const { stamp } = this;
    if (own.length > 1 && rarest > p.candidateBudget) {
      const [first, second] = own as [Term, Term];
      // Slots of the first list get -query, and those also in the second become candidates.
      this.forEachPosting(first.id, (slot) => {
        if (passes(slot)) stamp[slot] = -query;
      });
      this.forEachPosting(second.id, (slot) => {
        if (stamp[slot] === -query) {
          stamp[slot] = query;
          found.push(slot);
        }
      });
    } else {
      let before = 0;
      for (const term of terms) {
        if (before + term.df <= p.candidateBudget || before === 0) {
          this.forEachPosting(term.id, (slot) => {
            if (stamp[slot] !== query && passes(slot)) {
              stamp[slot] = query;
              found.push(slot);
            }
          });
        }
        before += term.df;
      }
    }
    if (found.length > p.maxCandidates) return undefined;
    for (const slot of found) this.scores[slot] = Number.NaN;
    return found;
  }

  private forEachPosting(id: number, visit: (slot: number) => void): void {
    const slots = this.postingSlots[id] as Int32Array;
    const length = this.postingLength[id] as number;
    for (let index = 0; index < length; index++) visit(slots[index] as number);
  }

  private nextQuery(): number {
    const slots = this.slotSegment.length;
    if (this.stamp.length < slots) {
      const size = Math.max(1024, slots * 2);
      this.stamp = new Int32Array(size);
      this.scores = new Float64Array(size);
      this.queryNumber = 0;
    }
    if (this.queryNumber >= 2 ** 30) {
      this.stamp.fill(0);
      this.queryNumber = 0;
    }
    return ++this.queryNumber;
  }

  private lexemeId(lexeme: string): number {
    let id = this.lexemeIds.get(lexeme);
    if (id === undefined) {
      id = this.postingSlots.length;
      this.lexemeIds.set(lexeme, id);
      this.postingSlots.push(new Int32Array(2));
      this.postingCounts.push(new Int32Array(2));
      this.postingLength.push(0);
      this.postingDead.push(0);
      this.documentFrequency.push(0);
    }
    return id;
  }

  private append(id: number, slot: number, packed: number): void {
    const length = this.postingLength[id] as number;
    let slots = this.postingSlots[id] as Int32Array;
    let counts = this.postingCounts[id] as Int32Array;
    if (length === slots.length) {
      slots = grow(slots, length * 2);
      counts = grow(counts, length * 2);
      this.postingSlots[id] = slots;
      this.postingCounts[id] = counts;
    }
    slots[length] = slot;
    counts[length] = packed;
    this.postingLength[id] = length + 1;
  }

  /** Drops a lexeme's dead postings, keeping the order of the rest. */
  private compactList(id: number, renumbered?: Int32Array): void {
    const slots = this.postingSlots[id] as Int32Array;
    const counts = this.postingCounts[id] as Int32Array;
    const length = this.postingLength[id] as number;
    let kept = 0;
    for (let index = 0; index < length; index++) {
      const slot = slots[index] as number;
      if (this.slotSegment[slot] === undefined) continue;
      slots[kept] = renumbered ? (renumbered[slot] as number) : slot;
      counts[kept] = counts[index] as number;
      kept++;
    }
    this.postingLength[id] = kept;
    this.postingDead[id] = 0;
  }

  /** Renumbers the live slots 0.. in order and drops the dead ones from every list. */
  private renumber(): void {
    const renumbered = new Int32Array(this.slotSegment.length).fill(-1);
    let next = 0;
    this.slotSegment.forEach((segmentId, slot) => {
      if (segmentId !== undefined) renumbered[slot] = next++;
    });
    for (let id = 0; id < this.postingSlots.length; id++) this.compactList(id, renumbered);
    const keep = <T>(values: T[]) => values.filter((_, slot) => (renumbered[slot] as number) >= 0);
    this.slotSegment = keep(this.slotSegment);
    this.slotDocument = keep(this.slotDocument);
    this.slotTokens = keep(this.slotTokens);
    this.slotLanguage = keep(this.slotLanguage);
    this.slotExecution = keep(this.slotExecution);
    this.slotLexemes = keep(this.slotLexemes);
    this.bySegment.clear();
    this.byDocument.clear();
    this.slotSegment.forEach((segmentId, slot) => {
      this.bySegment.set(segmentId as string, slot);
      const documentId = this.slotDocument[slot] as string;
      const slots = this.byDocument.get(documentId) ?? new Set<number>();
      slots.add(slot);
      this.byDocument.set(documentId, slots);
    });
    this.deadSlots = 0;
    this.stamp = new Int32Array(0);
    this.scores = new Float64Array(0);
  }

  private intern(value: string): string {
    const known = this.interned.get(value);
    if (known !== undefined) return known;
    this.interned.set(value, value);
    return value;
  }
}

function grow(values: Int32Array, size: number): Int32Array {
  const grown = new Int32Array(Math.max(size, 2));
  grown.set(values);
  return grown;
}
