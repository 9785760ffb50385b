/**
 * Second stage of RRF search: the first `rerankDefaults.depth` fused candidates are re-scored
 * with what a rank-based fusion cannot see, then cut to the request's limit.
 *
 * score = fused RRF score + sum over features of weight * feature / (k + 1)
 *
 * so a weight of 1 is worth the fused score of rank 1 in one ranking of weight 1. Each feature
 * is in [0, 1]. Two come from the candidate list:
 * - keyword: the BM25 score over the best candidate's (RRF keeps only the rank);
 * - page: how many of the candidates are segments of the same page (0 for one, 1 for five).
 * The others are computed on the query's content words (lower case, stop words of English and
 * the Scandinavian languages dropped) matched by a short prefix, so "replication" and
 * "replica", "tabellen" and "tabell" meet without a stemmer:
 * - proximity: the query words found in the segment text, and how close together:
 *   (found - 1) / (smallest window holding them all - 1), times the share found (0 below two);
 * - phrase: the share of the query's adjacent word pairs that are adjacent in the text, the
 *   title or a heading;
 * - identifier: the query's names (pg_dump, work_mem, postgresql.conf, words typed in capitals
 *   such as VACUUM) found in the title or a heading (1) or only in the text (0.5);
 * - heading: the title and the segment's heading path against the query words (set cosine);
 * - position: 1 / (1 + the segment's index on its page): a page's opening segment says what
 *   the page is.
 * Ties are broken by segment id, as in the SQL. The weights were chosen on the dev split of
 * bench/questions/postgres-docs.jsonl only (bench/rerank-weights.ts, bench/questions/README.md).
 * A search computes only the features its weights use (proximity, heading and position are at
 * 0 by default); the bench computes all of them.
 */
import { dan, eng, nob, swe } from 'stopword';

export interface RerankWeights {
  keyword: number;
  page: number;
  proximity: number;
  phrase: number;
  identifier: number;
  heading: number;
  position: number;
}

export const rerankDefaults = {
  /** Fused candidates re-scored (the rest keep their fused order after them). */
  depth: 50,
  /** Chosen on the dev split (80 questions); the features at 0 did not help there. */
  weights: {
    keyword: 0.2,
    page: 0.12,
    proximity: 0,
    phrase: 0.01,
    identifier: 0.08,
    heading: 0,
    position: 0,
  } satisfies RerankWeights,
};

export type RerankFeatures = RerankWeights;

export interface RerankCandidate {
  segment_id: string;
  document_id: string;
  score: number;
  /** The keyword ranking's BM25 score; null when only the vector ranking found it. */
  keyword_raw: number | null;
  text: string;
  title: string | null;
  heading_path: readonly string[];
  segment_index: number;
  /** The text's words already analysed (textWords), when the caller holds them: the scan then skips the parse. */
  text_words?: TextWords | undefined;
}

/** Words seen in texts, each once: its lower case and its matching key (key()), by id. */
export class WordVocabulary {
  readonly lowers: string[] = [];
  readonly keys: string[] = [];
  private readonly ids = new Map<string, number>();

  idOf(word: string): number {
    const lower = word.toLowerCase();
    let id = this.ids.get(lower);
    if (id === undefined) {
      id = this.lowers.length;
      this.ids.set(lower, id);
      this.lowers.push(lower);
      // key() reads only the lower case, so one key per lower-case word.
      this.keys.push(key(lower));
    }
    return id;
  }
}

/** A text's words in order, as ids of a vocabulary. */
export interface TextWords {
  ids: Int32Array;
  vocabulary: WordVocabulary;
}

/** The text's words as a scan reads them (a shared vocabulary keeps one copy of each word). */
export function textWords(text: string, vocabulary: WordVocabulary = new WordVocabulary()): TextWords {
  return { ids: Int32Array.from(words(text), (word) => vocabulary.idOf(word)), vocabulary };
}

const STOP_WORDS = new Set([...eng, ...nob, ...dan, ...swe].map((word) => word.toLowerCase()));
/** Words are matched on this many leading characters (names are matched whole). */
const PREFIX = 5;
const WORD = /[\p{L}\p{N}_]+(?:\.[\p{L}\p{N}_]+)*/gu;

function words(text: string): string[] {
  return text.match(WORD) ?? [];
}

function isName(word: string): boolean {
  return /[_.]/.test(word) || (/\d/.test(word) && /\p{L}/u.test(word));
}

const DIGIT = /\d/;
const LETTER = /\p{L}/u;

/**
 * A word's matching key: names whole, other words by their first PREFIX characters after a
 * plural "s" (so "slot" meets "slots", which a prefix alone would not).
 */
function key(word: string): string {
  const lower = word.toLowerCase();
  if (lower.includes('_') || lower.includes('.') || (DIGIT.test(lower) && LETTER.test(lower))) return lower;
  const singular = lower.length > 3 && lower.endsWith('s') ? lower.slice(0, -1) : lower;
  return singular.length > PREFIX ? singular.slice(0, PREFIX) : singular;
}

/** What the features need of the query, computed once per search. */
export interface AnalysedQuery {
  /** Content word keys, distinct. */
  terms: string[];
  /** Adjacent content word pairs of the query, as "a b" keys. */
  pairs: string[];
  /** Names and words typed in capitals, lower case. */
  names: string[];
}

export function analyseQuery(query: string): AnalysedQuery {
  const all = words(query);
  const content = all.map((word) => (STOP_WORDS.has(word.toLowerCase()) ? undefined : key(word)));
  const terms = [...new Set(content.filter((term): term is string => term !== undefined && term.length > 1))];
  const pairs = new Set<string>();
  for (let index = 1; index < content.length; index++) {
    const [first, second] = [content[index - 1], content[index]];
    if (first && second && first !== second) pairs.add(`${first} ${second}`);
  }
  const names = new Set(
    all
      .filter(
        (word) => isName(word) || (word.length >= 3 && word === word.toUpperCase() && /\p{Lu}/u.test(word)),
      )
      .map((word) => word.toLowerCase()),
  );
  return { terms, pairs: [...pairs], names: [...names] };
}

/**
 * Smallest number of consecutive tokens holding every wanted key that occurs, from the
 * positions of the wanted keys only.
 */
function smallestWindow(hits: readonly { position: number; key: string }[]): { found: number; span: number } {
  const present = new Set(hits.map((hit) => hit.key));
  if (present.size < 2) return { found: present.size, span: present.size };
  const counts = new Map<string, number>();
  let covered = 0;
  let best = Number.POSITIVE_INFINITY;
  let start = 0;
  for (const hit of hits) {
    counts.set(hit.key, (counts.get(hit.key) ?? 0) + 1);
    if (counts.get(hit.key) === 1) covered++;
    while (covered === present.size) {
      const first = hits[start] as { position: number; key: string };
      best = Math.min(best, hit.position - first.position + 1);
      const left = (counts.get(first.key) ?? 0) - 1;
      counts.set(first.key, left);
      if (left === 0) covered--;
      start++;
    }
  }
  return { found: present.size, span: best };
}

/** One pass over a text's words: where the query's words are, its pairs found adjacent, its names found. */
function scan(
  text: string | TextWords,
  query: AnalysedQuery,
  wanted: ReadonlySet<string>,
  pairs: ReadonlySet<string>,
) {
  const hits: { position: number; key: string }[] = [];
  const pairsFound = new Set<string>();
  const namesFound = new Set<string>();
  const names = new Set(query.names);
  const pairStarts = new Set([...pairs].map((pair) => pair.slice(0, pair.indexOf(' '))));
  const { ids, vocabulary } = typeof text === 'string' ? textWords(text) : text;
  const { keys, lowers } = vocabulary;
  let previous: string | undefined;
  for (let position = 0; position < ids.length; position++) {
    const id = ids[position] as number;
    const current = keys[id] as string;
    if (names.size > 0 && names.has(lowers[id] as string)) namesFound.add(lowers[id] as string);
    if (wanted.has(current)) hits.push({ position, key: current });
    if (previous !== undefined && pairStarts.has(previous) && pairs.has(`${previous} ${current}`))
      pairsFound.add(`${previous} ${current}`);
    previous = current;
  }
  return { hits, pairsFound, namesFound };
}

/** What the features need of the candidate list as a whole. */
export interface CandidateContext {
  topKeywordScore: number;
  segmentsPerDocument: Map<string, number>;
}

export function candidateContext(candidates: readonly RerankCandidate[]): CandidateContext {
  const segmentsPerDocument = new Map<string, number>();
  let topKeywordScore = 0;
  for (const candidate of candidates) {
    segmentsPerDocument.set(candidate.document_id, (segmentsPerDocument.get(candidate.document_id) ?? 0) + 1);
    topKeywordScore = Math.max(topKeywordScore, Number(candidate.keyword_raw ?? 0));
  }
  return { topKeywordScore, segmentsPerDocument };
}

const noWords: ReadonlySet<string> = new Set();

/** Every feature: what bench/rerank-weights.ts measures. */
export const allFeatures: ReadonlySet<keyof RerankWeights> = new Set(
  Object.keys(rerankDefaults.weights) as (keyof RerankWeights)[],
);

/**
 * The candidate's features; those not in `computed` are left at 0 without being computed
 * (a search computes only the features its weights use).
 */
export function rerankFeatures(
  query: AnalysedQuery,
  candidate: RerankCandidate,
  context: CandidateContext,
  computed: ReadonlySet<keyof RerankWeights> = allFeatures,
): RerankFeatures {
  const keyword =
    context.topKeywordScore > 0 ? Number(candidate.keyword_raw ?? 0) / context.topKeywordScore : 0;
  const page = Math.min(1, ((context.segmentsPerDocument.get(candidate.document_id) ?? 1) - 1) / 4);
  const position = computed.has('position') ? 1 / (1 + candidate.segment_index) : 0;
  const textual = ['proximity', 'phrase', 'identifier', 'heading'] as const;
  if (!textual.some((name) => computed.has(name)))
    return { keyword, page, proximity: 0, phrase: 0, identifier: 0, heading: 0, position };

  const wanted = new Set(query.terms);
  const pairs = new Set(query.pairs);
  // Only proximity reads where the query's words are, and only in the text.
  const inText = scan(
    candidate.text_words ?? candidate.text,
    query,
    computed.has('proximity') ? wanted : noWords,
    pairs,
  );
  const headingText = [candidate.title ?? '', ...candidate.heading_path].join(' \n ');
  const inHeading = scan(headingText, query, noWords, pairs);

  let proximity = 0;
  if (computed.has('proximity')) {
    const { found, span } = smallestWindow(inText.hits);
    proximity =
      found >= 2 && query.terms.length > 0 ? ((found - 1) / (span - 1)) * (found / query.terms.length) : 0;
  }

  const phrase =
    computed.has('phrase') && query.pairs.length > 0
      ? query.pairs.filter((pair) => inText.pairsFound.has(pair) || inHeading.pairsFound.has(pair)).length /
        query.pairs.length
      : 0;

  let identifier = 0;
  if (computed.has('identifier')) {
    for (const name of query.names)
      identifier += inHeading.namesFound.has(name) ? 1 : inText.namesFound.has(name) ? 0.5 : 0;
    if (query.names.length > 0) identifier /= query.names.length;
  }

  let heading = 0;
  if (computed.has('heading')) {
    const headingTerms = new Set(
      words(headingText)
        .map(key)
        .filter((entry) => !STOP_WORDS.has(entry) && entry.length > 1),
    );
    let shared = 0;
    for (const entry of headingTerms) if (wanted.has(entry)) shared++;
    heading =
      headingTerms.size > 0 && wanted.size > 0 ? shared / Math.sqrt(headingTerms.size * wanted.size) : 0;
  }

  return { keyword, page, proximity, phrase, identifier, heading, position };
}

/** The features `weights` gives a weight to. */
export function weightedFeatures(weights: RerankWeights): ReadonlySet<keyof RerankWeights> {
  return new Set((Object.keys(weights) as (keyof RerankWeights)[]).filter((name) => weights[name] !== 0));
}

/**
 * The candidates in their new order: the first `depth` re-scored (their `score` replaced), the
 * rest after them in their fused order.
 */
export function rerank<T extends RerankCandidate>(
  query: string,
  candidates: readonly T[],
  options: { k: number; depth?: number; weights?: RerankWeights },
): T[] {
  const depth = options.depth ?? rerankDefaults.depth;
  const analysed = analyseQuery(query);
  const head = candidates.slice(0, depth);
  const context = candidateContext(head);
  // Features at weight 0 would add nothing: they are not computed.
  const computed = weightedFeatures(options.weights ?? rerankDefaults.weights);
  const features = head.map((candidate) => rerankFeatures(analysed, candidate, context, computed));
  return reorder(candidates, features, { ...options, depth });
}

/** `rerank` on features already computed (one per candidate, at least the first `depth`). */
export function reorder<T extends { segment_id: string; score: number }>(
  candidates: readonly T[],
  features: readonly RerankFeatures[],
  options: { k: number; depth?: number; weights?: RerankWeights },
): T[] {
  const depth = Math.min(options.depth ?? rerankDefaults.depth, candidates.length);
  const weights = options.weights ?? rerankDefaults.weights;
  const unit = 1 / (options.k + 1);
  const head = candidates.slice(0, depth).map((candidate, index) => {
    const feature = features[index] as RerankFeatures;
    let boost = 0;
    for (const name of Object.keys(weights) as (keyof RerankWeights)[])
      boost += weights[name] * feature[name];
    return { ...candidate, score: candidate.score + boost * unit };
  });
  head.sort(
    (a, b) => b.score - a.score || (a.segment_id < b.segment_id ? -1 : a.segment_id > b.segment_id ? 1 : 0),
  );
  return [...head, ...candidates.slice(depth)];
}
