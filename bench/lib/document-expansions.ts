/**
 * Issue 34, document-side expansion: for each segment, terms a reader might search for that the
 * segment itself does not hold, as English lexemes (the index's own stemming) with a weight in
 * (0, 1]. bench:doc-expansion adds them as a lower-weighted field (expanded-keyword-ranking.ts).
 *
 * Sources, each a function of the indexed corpus alone (no question is read):
 * - `neighbours`: the salient terms of the segments just before and after it on its page;
 * - `page`: the salient terms of its whole page;
 * - `anchors`: the words of the links other pages point to its page with (inbound anchor
 *   text, the classic web-search expansion: the book index and cross references name a page
 *   in the words of the pages that cite it);
 * - `vectors`: the shipped word vectors' nearest indexed neighbours of its salient terms
 *   (cosine at least `minSimilarity`, weight the cosine);
 * - `cooccurrence`: the terms that co-occur most with its salient terms across the corpus's
 *   segments (pointwise mutual information, so it works in any language the corpus is in).
 *
 * A term's salience in a segment is (1 + ln tf) x ln(N / df), tf counting heading occurrences
 * once more; the `salient` strongest of the segment are expanded.
 */
import type { LexemeCounts } from '../../src/search/tsvector-text.js';

export interface ExpansionSegment {
  documentId: string;
  segmentIndex: number;
  url: string | null;
  text: string;
  lexemes: readonly LexemeCounts[];
}

export type ExpansionMap = Map<string, number>;

export interface CorpusStatistics {
  n: number;
  df: Map<string, number>;
  /** Segment slots per page, in segment index order. */
  pages: Map<string, number[]>;
}

export function corpusStatistics(segments: readonly ExpansionSegment[]): CorpusStatistics {
  const df = new Map<string, number>();
  const pages = new Map<string, number[]>();
  segments.forEach((segment, slot) => {
    for (const entry of segment.lexemes) df.set(entry.lexeme, (df.get(entry.lexeme) ?? 0) + 1);
    const slots = pages.get(segment.documentId) ?? [];
    slots.push(slot);
    pages.set(segment.documentId, slots);
  });
  for (const slots of pages.values())
    slots.sort(
      (a, b) =>
        (segments[a] as ExpansionSegment).segmentIndex - (segments[b] as ExpansionSegment).segmentIndex,
    );
  return { n: segments.length, df, pages };
}

/** The segment's `count` most salient lexemes held by two segments or more, strongest first. */
export function salientLexemes(
  lexemes: readonly LexemeCounts[],
  statistics: CorpusStatistics,
  count: number,
): string[] {
  return lexemes
    .filter((entry) => (statistics.df.get(entry.lexeme) ?? 0) >= 2 && /\p{L}/u.test(entry.lexeme))
    .map((entry) => ({
      lexeme: entry.lexeme,
      salience:
        (1 + Math.log(entry.occurrences + entry.headingOccurrences)) *
        Math.log(statistics.n / (statistics.df.get(entry.lexeme) as number)),
    }))
    .sort((a, b) => b.salience - a.salience || (a.lexeme < b.lexeme ? -1 : 1))
    .slice(0, count)
    .map((entry) => entry.lexeme);
}

function addTerm(map: ExpansionMap, own: ReadonlySet<string>, lexeme: string, weight: number): void {
  if (own.has(lexeme)) return;
  if ((map.get(lexeme) ?? 0) < weight) map.set(lexeme, weight);
}

const ownLexemes = (segment: ExpansionSegment) => new Set(segment.lexemes.map((entry) => entry.lexeme));

export function neighbourExpansions(
  segments: readonly ExpansionSegment[],
  statistics: CorpusStatistics,
  salient: number,
): ExpansionMap[] {
  const expansions = segments.map(() => new Map<string, number>());
  for (const slots of statistics.pages.values())
    slots.forEach((slot, position) => {
      const own = ownLexemes(segments[slot] as ExpansionSegment);
      for (const other of [slots[position - 1], slots[position + 1]]) {
        if (other === undefined) continue;
        const terms = salientLexemes((segments[other] as ExpansionSegment).lexemes, statistics, salient);
        for (const lexeme of terms) addTerm(expansions[slot] as ExpansionMap, own, lexeme, 1);
      }
    });
  return expansions;
}

export function pageExpansions(
  segments: readonly ExpansionSegment[],
  statistics: CorpusStatistics,
  salient: number,
): ExpansionMap[] {
  const expansions = segments.map(() => new Map<string, number>());
  for (const slots of statistics.pages.values()) {
    const summed = new Map<string, LexemeCounts>();
    for (const slot of slots)
      for (const entry of (segments[slot] as ExpansionSegment).lexemes) {
        const known = summed.get(entry.lexeme) ?? {
          lexeme: entry.lexeme,
          occurrences: 0,
          headingOccurrences: 0,
        };
        summed.set(entry.lexeme, {
          lexeme: entry.lexeme,
          occurrences: known.occurrences + entry.occurrences,
          headingOccurrences: known.headingOccurrences + entry.headingOccurrences,
        });
      }
    const terms = salientLexemes([...summed.values()], statistics, salient);
    for (const slot of slots) {
      const own = ownLexemes(segments[slot] as ExpansionSegment);
      for (const lexeme of terms) addTerm(expansions[slot] as ExpansionMap, own, lexeme, 1);
    }
  }
  return expansions;
}

const markdownLink = /\[([^\]\n]{1,200})\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;

/** A relative link, or an absolute one to the host of the page it is on. */
function sameSite(target: string, pageUrl: string | null): boolean {
  if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) return true;
  try {
    return pageUrl !== null && new URL(target).host === new URL(pageUrl).host;
  } catch {
    return false;
  }
}

/** The page a link target names: its last path part without query or fragment. */
export function pageName(target: string): string {
  const bare = target.replace(/[?#].*$/, '');
  return bare.slice(bare.lastIndexOf('/') + 1);
}

/**
 * Inbound anchor text: per target page name, the labels of the links from other pages; with
 * `context` characters, also the words around the link on its line (an index entry's term,
 * a cross reference's sentence), cut at the line's other links.
 */
export function inboundLabels(segments: readonly ExpansionSegment[], context = 0): Map<string, string[]> {
  const labels = new Map<string, string[]>();
  for (const segment of segments) {
    const from = pageName(segment.url ?? '');
    for (const match of segment.text.matchAll(markdownLink)) {
      const target = pageName(match[2] as string);
      if (target === '' || target === from || !sameSite(match[2] as string, segment.url)) continue;
      const list = labels.get(target) ?? [];
      let label = match[1] as string;
      if (context > 0) {
        const at = match.index as number;
        const end = at + match[0].length;
        const lineStart = segment.text.lastIndexOf('\n', at) + 1;
        const lineEnd = segment.text.indexOf('\n', end);
        const before = segment.text.slice(Math.max(lineStart, at - context), at).replace(/.*\)/s, '');
        const after = segment.text
          .slice(end, Math.min(lineEnd < 0 ? segment.text.length : lineEnd, end + context))
          .replace(/\[.*/s, '');
        label = `${before} ${label} ${after}`;
      }
      list.push(label.replace(/[`*_\\#|[\]()]/g, ' '));
      labels.set(target, list);
    }
  }
  return labels;
}

/**
 * Anchor lexemes per page (`lexemesOfLabel` gives a label's English lexemes); a lexeme's
 * weight is the share of the page's inbound links that use it, at least 1 / 3 of the most used.
 */
export function anchorExpansions(
  segments: readonly ExpansionSegment[],
  statistics: CorpusStatistics,
  labels: ReadonlyMap<string, string[]>,
  lexemesOfLabel: ReadonlyMap<string, readonly string[]>,
): ExpansionMap[] {
  const expansions = segments.map(() => new Map<string, number>());
  for (const slots of statistics.pages.values()) {
    const page = pageName((segments[slots[0] as number] as ExpansionSegment).url ?? '');
    const counts = new Map<string, number>();
    for (const label of labels.get(page) ?? [])
      for (const lexeme of new Set(lexemesOfLabel.get(label) ?? []))
        if (/\p{L}/u.test(lexeme)) counts.set(lexeme, (counts.get(lexeme) ?? 0) + 1);
    const most = Math.max(0, ...counts.values());
    for (const slot of slots) {
      const own = ownLexemes(segments[slot] as ExpansionSegment);
      for (const [lexeme, count] of counts)
        if (count * 3 >= most) addTerm(expansions[slot] as ExpansionMap, own, lexeme, count / most);
    }
  }
  return expansions;
}

/**
 * Word-vector neighbours: `vectorOf` gives an indexed lexeme's unit vector (its most frequent
 * word's); each salient lexeme adds its `neighbours` nearest indexed lexemes at cosine >= min.
 */
export function vectorExpansions(
  segments: readonly ExpansionSegment[],
  statistics: CorpusStatistics,
  vocabulary: { lexemes: readonly string[]; matrix: Float32Array; dimensions: number },
  options: { salient: number; neighbours: number; minSimilarity: number },
): ExpansionMap[] {
  const { lexemes, matrix, dimensions } = vocabulary;
  const rowOf = new Map(lexemes.map((lexeme, row) => [lexeme, row]));
  const nearest = new Map<string, { lexeme: string; similarity: number }[]>();
  const neighboursOf = (lexeme: string) => {
    const known = nearest.get(lexeme);
    if (known) return known;
    const row = rowOf.get(lexeme);
    const found: { lexeme: string; similarity: number }[] = [];
    if (row !== undefined) {
      const base = row * dimensions;
      for (let other = 0; other < lexemes.length; other++) {
        if (other === row) continue;
        let dot = 0;
        const offset = other * dimensions;
        for (let d = 0; d < dimensions; d++)
          dot += (matrix[base + d] as number) * (matrix[offset + d] as number);
        if (dot < options.minSimilarity) continue;
        found.push({ lexeme: lexemes[other] as string, similarity: dot });
      }
      found.sort((a, b) => b.similarity - a.similarity);
    }
    const kept = found.slice(0, options.neighbours);
    nearest.set(lexeme, kept);
    return kept;
  };
  return segments.map((segment) => {
    const map = new Map<string, number>();
    const own = ownLexemes(segment);
    for (const lexeme of salientLexemes(segment.lexemes, statistics, options.salient))
      for (const neighbour of neighboursOf(lexeme)) addTerm(map, own, neighbour.lexeme, neighbour.similarity);
    return map;
  });
}

/**
 * Corpus co-occurrence: for each salient lexeme, the `neighbours` lexemes of highest PMI with it
 * over the segments (each held by at least `minShared` segments together with it), weight the
 * PMI over the best one's. Only lexemes in 3 to N / 20 segments take part.
 */
export function cooccurrenceExpansions(
  segments: readonly ExpansionSegment[],
  statistics: CorpusStatistics,
  options: { salient: number; neighbours: number; minShared: number },
): ExpansionMap[] {
  const { n, df } = statistics;
  const usable = (lexeme: string) => {
    const frequency = df.get(lexeme) ?? 0;
    return frequency >= 3 && frequency <= n / 20 && /\p{L}/u.test(lexeme);
  };
  const salientOf = segments.map((segment) => salientLexemes(segment.lexemes, statistics, options.salient));
  const wanted = new Set(salientOf.flat().filter(usable));
  const together = new Map<string, Map<string, number>>();
  for (const segment of segments) {
    const held = segment.lexemes.map((entry) => entry.lexeme).filter(usable);
    for (const lexeme of held) {
      if (!wanted.has(lexeme)) continue;
      const counts = together.get(lexeme) ?? new Map<string, number>();
      for (const other of held) if (other !== lexeme) counts.set(other, (counts.get(other) ?? 0) + 1);
      together.set(lexeme, counts);
    }
  }
  const nearest = new Map<string, { lexeme: string; weight: number }[]>();
  for (const [lexeme, counts] of together) {
    const scored = [...counts]
      .filter(([, shared]) => shared >= options.minShared)
      .map(([other, shared]) => ({
        lexeme: other,
        pmi: Math.log((shared * n) / ((df.get(lexeme) as number) * (df.get(other) as number))),
      }))
      .filter((entry) => entry.pmi > 0)
      .sort((a, b) => b.pmi - a.pmi || (a.lexeme < b.lexeme ? -1 : 1))
      .slice(0, options.neighbours);
    const best = scored[0]?.pmi ?? 1;
    nearest.set(
      lexeme,
      scored.map((entry) => ({ lexeme: entry.lexeme, weight: entry.pmi / best })),
    );
  }
  return segments.map((segment, slot) => {
    const map = new Map<string, number>();
    const own = ownLexemes(segment);
    for (const lexeme of salientOf[slot] ?? [])
      for (const neighbour of nearest.get(lexeme) ?? [])
        addTerm(map, own, neighbour.lexeme, neighbour.weight);
    return map;
  });
}

/** Several sources merged, each term at its highest weight. */
export function mergeExpansions(...sources: readonly ExpansionMap[][]): ExpansionMap[] {
  const first = sources[0] ?? [];
  return first.map((_, slot) => {
    const map = new Map<string, number>();
    for (const source of sources)
      for (const [lexeme, weight] of source[slot] ?? [])
        if ((map.get(lexeme) ?? 0) < weight) map.set(lexeme, weight);
    return map;
  });
}

/**
 * The reader's language on an index in another: per English lexeme, the lexemes a Norwegian
 * reader's word for it gives, as the query would be parsed: by the Norwegian configuration
 * (a question detected as Norwegian) and by the English one, in the glossary word's inflected
 * forms (a question that detection missed is parsed as English only). `glossary`: Norwegian
 * word -> English words, the likeliest first (data/glossaries/nb-en.tsv).
 */
export const norwegianEndings = ['', 'e', 'r', 't', 'a', 'en', 'er', 'et', 'ene', 'ne', 'te', 'de'];

export function reverseGlossary(
  glossary: ReadonlyMap<string, readonly string[]>,
  englishOf: ReadonlyMap<string, readonly string[]>,
  norwegianOf: ReadonlyMap<string, readonly string[]>,
  commonEnglish: (lexeme: string) => boolean,
): Map<string, Map<string, number>> {
  const reverse = new Map<string, Map<string, number>>();
  for (const [word, targets] of glossary) {
    const norwegian = norwegianOf.get(word) ?? [];
    if (norwegian.length === 0) continue; // a Norwegian stop word
    const forms = new Set<string>(norwegian);
    const stem = word.endsWith('e') ? word.slice(0, -1) : word;
    for (const ending of norwegianEndings)
      for (const base of new Set([word, stem]))
        for (const lexeme of englishOf.get(base + ending) ?? [])
          if (!commonEnglish(lexeme)) forms.add(lexeme);
    targets.forEach((target, position) => {
      const lexemes = englishOf.get(target) ?? [];
      if (lexemes.length !== 1) return;
      const map = reverse.get(lexemes[0] as string) ?? new Map<string, number>();
      const weight = position === 0 ? 1 : 0.5;
      for (const form of forms) if ((map.get(form) ?? 0) < weight) map.set(form, weight);
      reverse.set(lexemes[0] as string, map);
    });
  }
  return reverse;
}

/** Each segment's `salient` strongest English lexemes in the reader's words (reverseGlossary). */
export function readerLanguageExpansions(
  segments: readonly ExpansionSegment[],
  statistics: CorpusStatistics,
  reverse: ReadonlyMap<string, ReadonlyMap<string, number>>,
  salient: number,
): ExpansionMap[] {
  return segments.map((segment) => {
    const map = new Map<string, number>();
    const own = ownLexemes(segment);
    for (const lexeme of salientLexemes(segment.lexemes, statistics, salient))
      for (const [form, weight] of reverse.get(lexeme) ?? []) addTerm(map, own, form, weight);
    return map;
  });
}
