/**
 * The offline answer: no model, only quotes. The retrieved segments are cut into sentences,
 * table rows and code blocks (answer-units.ts); each is scored against the question with the
 * analysis keyword search uses (search/text-analysis.ts: the same stemmers, stop words and
 * idf), and the best few that fit `maxCharacters` are quoted, each with its citation `[n]`.
 * A sentence that leads into a code block ("... then split the roles:") brings the block with
 * it. When no unit shares a searched word with the question, the answer says the indexed
 * sources do not answer it rather than quote something unrelated.
 */
import type { TextAnalyzer } from '../search/text-analysis.js';
import { type AnswerUnit, answerUnits } from './answer-units.js';

export const extractiveLabel = 'Extractive answer (no language model configured):';
export const noAnswerText =
  'The indexed sources do not answer this question: no indexed passage shares its searched words.';

export const extractiveDefaults = {
  /** The whole answer, label included. */
  maxCharacters: 600,
  maxUnits: 4,
  /** A unit scoring under this share of the best one is not quoted. */
  relativeFloor: 0.45,
  /** A unit's words found only in its headings count this share. */
  headingShare: 0.5,
  /** Words found only in the term line a sentence follows (the setting it describes) count this share. */
  subjectShare: 1,
  /** Table rows count this share: they are quoted only when they clearly answer. */
  rowShare: 0.8,
  /** A row whose first cell the question names (`partial` in "what does partial mean") counts this share. */
  keyedRowShare: 1.5,
  /** The first sentence under a heading the question names ("what does smart_segmenter do") counts this share. */
  sectionLeadShare: 1.5,
  /** In answer to "how do I ...", code and the sentences leading into it count this many times. */
  procedureShare: 1.5,
  /** A definition's paragraph up to this long is quoted whole when its lead sentence is. */
  maxDefinitionCharacters: 300,
  /** BM25's b over unit lengths in characters (0: length does not matter). */
  lengthWeight: 0.5,
  /** Longer units are not quoted (a run-on list flattened into one sentence). */
  maxUnitCharacters: 420,
};

const bm25 = { k1: 1.2 };
/** "How do I ...", "How can we ...", "How to ...", "Hvordan kan jeg ...": asking for steps. */
const proceduralQuestion =
  /^\s*(how\s+(do|can|should|would|could)\s+(i|we|you|one)\b|how\s+to\b|hvordan\s+(kan|gjør|skal|får)\s+(jeg|vi|man|du)\b)/i;

export interface AnswerPassage {
  citation: number;
  text: string;
  headingPath: readonly string[];
}

export interface Candidate {
  unit: AnswerUnit;
  citation: number;
  passage: number;
  position: number;
  score: number;
  /** The code block this sentence introduces, quoted with it. */
  follower: Candidate | undefined;
  /** The rest of the definition this sentence leads, quoted with it (linkContinuations). */
  continuation?: Candidate[];
  /** Quoted after the sentence that introduces it, whose citation it shares. */
  ledIn?: boolean;
}

export async function extractiveAnswer(
  request: { query: string; passages: readonly AnswerPassage[] },
  analyze: TextAnalyzer,
  options: Partial<typeof extractiveDefaults> = {},
): Promise<string> {
  const settings = { ...extractiveDefaults, ...options };
  const chosen = choose(await scoredUnits(request, analyze, settings), settings);
  if (chosen.length === 0) return noAnswerText;
  return [extractiveLabel, ...chosen.map(render)].join('\n');
}

/** Every quotable unit of the passages with its score, in reading order. */
export async function scoredUnits(
  request: { query: string; passages: readonly AnswerPassage[] },
  analyze: TextAnalyzer,
  options: Partial<typeof extractiveDefaults> = {},
): Promise<Candidate[]> {
  const settings = { ...extractiveDefaults, ...options };
  const candidates: Candidate[] = request.passages.flatMap((passage, passageOrder) =>
    answerUnits(passage.text).map(
      (unit, position): Candidate => ({
        unit,
        citation: passage.citation,
        passage: passageOrder,
        position,
        score: 0,
        follower: undefined,
      }),
    ),
  );
  if (candidates.length === 0) return candidates;
  linkFollowers(candidates);
  linkContinuations(candidates, settings);
  await score(request, candidates, analyze, settings);
  for (const candidate of candidates)
    if (candidate.follower)
      candidate.follower.score = Math.max(candidate.follower.score, candidate.score * 0.9);
  return candidates;
}

async function score(
  request: { query: string; passages: readonly AnswerPassage[] },
  candidates: Candidate[],
  analyze: TextAnalyzer,
  settings: typeof extractiveDefaults,
): Promise<void> {
  const contexts = candidates.map((candidate) => {
    const passage = request.passages[candidate.passage] as AnswerPassage;
    return [...passage.headingPath, ...candidate.unit.headings].join(' \n ');
  });
  // Keys and the question are compared with identifiers kept whole: a row keyed `segments` is
  // not named by a question about `smart_segmenter`, which the analysis splits into smart +
  // segment.
  const keys = candidates.map((candidate) =>
    candidate.unit.kind === 'row' ? wholeIdentifiers(candidate.unit.key) : '',
  );
  const subjects = candidates.map((candidate) =>
    candidate.unit.kind === 'row' ? '' : (candidate.unit.subject ?? ''),
  );
  const sections = candidates.map(({ unit }) =>
    unit.kind === 'sentence' && unit.opensSection ? wholeIdentifiers(unit.headings.at(-1) ?? '') : '',
  );
  const analysis = await analyze(request.query, [
    ...candidates.map((candidate) => candidate.unit.text),
    ...contexts,
    ...keys,
    ...subjects,
    ...sections,
    wholeIdentifiers(request.query),
  ]);
  const count = candidates.length;
  const averageLength = candidates.reduce((sum, item) => sum + item.unit.text.length, 0) / count;
  const question = normalised(request.query);
  const procedure = proceduralQuestion.test(request.query);
  const namedInQuestion = analysis.texts[5 * count] ?? new Set<string>();
  const named = (lexemes: Set<string>) =>
    lexemes.size > 0 && [...lexemes].every((lexeme) => namedInQuestion.has(lexeme));
  candidates.forEach((candidate, index) => {
    const own = analysis.texts[index] ?? new Set<string>();
    const context = analysis.texts[count + index] ?? new Set<string>();
    const key = analysis.texts[2 * count + index] ?? new Set<string>();
    const subject = analysis.texts[3 * count + index] ?? new Set<string>();
    let matched = 0;
    let fromContext = 0;
    for (const [lexeme, idf] of analysis.query) {
      if (own.has(lexeme)) matched += idf;
      else if (subject.has(lexeme)) fromContext += settings.subjectShare * idf;
      else if (context.has(lexeme)) fromContext += settings.headingShare * idf;
    }
    // Only a unit that itself holds a searched word can answer, and one that holds the whole
    // question (an example of asking it) does not; its headings add context.
    if (matched === 0 || normalised(candidate.unit.text).includes(question)) {
      candidate.score = 0;
      return;
    }
    const raw = matched + fromContext;
    // BM25's length normalisation at one occurrence: a long unit matches more words by chance.
    const length = candidate.unit.text.length / averageLength;
    const lengthFactor =
      (bm25.k1 + 1) / (1 + bm25.k1 * (1 - settings.lengthWeight + settings.lengthWeight * length));
    // A row is about its first cell: a row whose key the question names is a definition, as
    // is the sentence opening a section whose heading the question names.
    const kindShare =
      candidate.unit.kind === 'row'
        ? named(key)
          ? settings.keyedRowShare
          : settings.rowShare
        : named(analysis.texts[4 * count + index] ?? new Set())
          ? settings.sectionLeadShare
          : 1;
    // A question asking how to do something is answered by commands, or what leads into them.
    const procedural =
      procedure && (candidate.unit.kind === 'code' || candidate.follower !== undefined)
        ? settings.procedureShare
        : 1;
    // Retrieval's order breaks near-ties: the best segment's sentence first.
    candidate.score = raw * lengthFactor * kindShare * procedural * (1 + 0.1 / (candidate.passage + 1));
  });
}

/** A sentence ending in a colon followed, in the same segment, by a code block leads into it. */
function linkFollowers(candidates: Candidate[]): void {
  candidates.forEach((candidate, index) => {
    const next = candidates[index + 1];
    if (
      candidate.unit.kind === 'sentence' &&
      candidate.unit.text.endsWith(':') &&
      next?.unit.kind === 'code' &&
      next.passage === candidate.passage
    ) {
      candidate.follower = next;
    }
  });
}

/**
 * The first sentence of a paragraph under a term line ("`length`: Length of each signature in
 * bits. It is rounded up to a multiple of 16. The default is 80 bits.") leads a definition:
 * quoted, it brings the paragraph's other sentences when the whole is short, since a question
 * about the term asks for one of its details and the lead alone only names it.
 */
function linkContinuations(candidates: Candidate[], settings: typeof extractiveDefaults): void {
  candidates.forEach((lead, index) => {
    if (lead.unit.kind !== 'sentence' || lead.unit.subject === undefined || lead.unit.previous !== undefined)
      return;
    const rest: Candidate[] = [];
    let length = lead.unit.text.length;
    for (let next = candidates[index + 1], before = lead; next; next = candidates[index + rest.length + 1]) {
      if (next.passage !== lead.passage || next.unit.kind !== 'sentence') break;
      if (next.unit.previous === undefined || next.unit.previous !== before.unit.text) break;
      rest.push(next);
      length += next.unit.text.length + 1;
      before = next;
    }
    if (rest.length > 0 && length <= settings.maxDefinitionCharacters) lead.continuation = rest;
  });
}

function choose(candidates: Candidate[], settings: typeof extractiveDefaults): Candidate[] {
  const ranked = candidates
    .filter((candidate) => candidate.score > 0)
    .sort((a, b) => b.score - a.score || a.passage - b.passage || a.position - b.position);
  const best = ranked[0]?.score ?? 0;
  const chosen: Candidate[] = [];
  const quoted = new Set<Candidate>();
  let length = extractiveLabel.length;
  for (const candidate of ranked) {
    if (chosen.length >= settings.maxUnits || candidate.score < best * settings.relativeFloor) break;
    if (quoted.has(candidate) || candidate.unit.text.length > settings.maxUnitCharacters) continue;
    if (chosen.some((item) => repeats(item, candidate))) continue;
    const group = [candidate, ...(candidate.continuation ?? []).filter((item) => !quoted.has(item))];
    const follower = candidate.follower;
    if (follower && !quoted.has(follower) && follower.unit.text.length <= settings.maxUnitCharacters)
      group.push(follower);
    const added = group.reduce((sum, item) => sum + render(item).length + 1, 0);
    if (length + added > settings.maxCharacters) continue;
    for (const item of group) {
      chosen.push(item);
      quoted.add(item);
    }
    if (follower && group.at(-1) === follower) follower.ledIn = true;
    length += added;
  }
  // In the order they are read: segments by their best quote, units in document order.
  const rankOfPassage = new Map<number, number>();
  for (const item of chosen)
    if (!rankOfPassage.has(item.passage)) rankOfPassage.set(item.passage, item.score);
  return chosen.sort(
    (a, b) =>
      (rankOfPassage.get(b.passage) ?? 0) - (rankOfPassage.get(a.passage) ?? 0) ||
      a.passage - b.passage ||
      a.position - b.position,
  );
}

/** The same words, or one holding the other (overlapping segments repeat sentences). */
function repeats(a: Candidate, b: Candidate): boolean {
  const left = normalised(a.unit.text);
  const right = normalised(b.unit.text);
  return left.includes(right) || right.includes(left);
}

/** `smart_segmenter` as one word `smartsegmenter`, so its parts do not count as named. */
function wholeIdentifiers(text: string): string {
  return text.replace(/([\p{L}\p{N}])[_-]+(?=[\p{L}\p{N}])/gu, '$1');
}

function normalised(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

function render(candidate: Candidate): string {
  const { unit, citation } = candidate;
  if (unit.kind === 'code') {
    const block = `\`\`\`${unit.language}\n${unit.text}\n\`\`\``;
    return candidate.ledIn ? block : `${block}\n[${citation}]`;
  }
  return `${unit.text} [${citation}]`;
}
