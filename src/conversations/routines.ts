/**
 * Recurring procedures in a cluster's conversations (conv_routine_discovery, offline): the
 * answers' steps — list items and ordinal sentences ("First", "Then", "Deretter") — are
 * grouped across conversations by shared terms, and the step groups that recur in enough
 * conversations, ordered by where they usually come, are the routine. What the answer says
 * before its first step are the preconditions, what it says after the last the outcome,
 * each kept when it recurs too. Every text kept is a phrasing several conversations used,
 * never one conversation's words alone.
 */
import { createHash } from 'node:crypto';
import type { CompactTurn } from './compact.js';
import { terms } from './keywords.js';

export interface RoutineSource {
  conversation_id: string;
  turns: readonly CompactTurn[];
}

export interface RoutineStep {
  text: string;
  /** Conversations that include the step. */
  support: number;
}

export interface Routine {
  steps: RoutineStep[];
  preconditions: string[];
  outcome: string | null;
  /** Conversations that follow at least half of the steps. */
  conversation_ids: string[];
}

export interface DiscoveryOptions {
  /** Share of the conversations a step must occur in. */
  minSupport: number;
  /** Conversations a step must occur in, whatever the share. */
  minConversations: number;
  /** Term Jaccard at or above which two phrasings are the same step. */
  similarity: number;
}

export const defaultDiscoveryOptions: DiscoveryOptions = {
  minSupport: 0.3,
  minConversations: 3,
  similarity: 0.4,
};

const listMarker = /^\s*(?:\d+[.)]|[-*•]|step \d+:?|steg \d+:?|trinn \d+:?)\s+/i;
const ordinal =
  /^(first(ly)?|then|next|after that|finally|lastly|først|deretter|så|etterpå|til slutt|sist|fyrst|til sist)\b[,:]?\s+/i;

interface Parts {
  steps: string[];
  before: string[];
  after: string[];
}

/** The steps of one conversation's answers, and the answer sentences before and after them. */
export function answerParts(turns: readonly CompactTurn[]): Parts {
  const lines = turns
    .filter((turn) => turn.role === 'assistant' || turn.role === 'agent')
    .flatMap((turn) => turn.text.split('\n'))
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
  const isStep = lines.map((line) => listMarker.test(line) || ordinal.test(line));
  const first = isStep.indexOf(true);
  const last = isStep.lastIndexOf(true);
  if (first < 0) return { steps: [], before: [], after: [] };
  const prose = (line: string) => line.length >= 20 && terms(line).length >= 2;
  return {
    steps: lines
      .filter((_, index) => isStep[index])
      .map((line) => capitalise(line.replace(listMarker, '').replace(ordinal, ''))),
    before: lines.slice(0, first).filter(prose),
    after: lines.slice(last + 1).filter(prose),
  };
}

interface Group {
  terms: Set<string>;
  phrasings: Map<string, number>;
  conversations: Set<string>;
  positions: number[];
}

/** Groups phrasings that share enough terms; each occurrence records its conversation and position. */
function groupPhrasings(
  occurrences: ReadonlyArray<{ text: string; conversation: string; position: number }>,
  similarity: number,
): Group[] {
  const groups: Group[] = [];
  for (const occurrence of occurrences) {
    const own = new Set(terms(occurrence.text));
    if (own.size === 0) continue;
    let best: Group | undefined;
    let bestScore = similarity;
    for (const group of groups) {
      const score = jaccardOf(own, group.terms);
      if (score >= bestScore) {
        best = group;
        bestScore = score;
      }
    }
    if (!best) {
      best = { terms: own, phrasings: new Map(), conversations: new Set(), positions: [] };
      groups.push(best);
    }
    best.phrasings.set(occurrence.text, (best.phrasings.get(occurrence.text) ?? 0) + 1);
    best.conversations.add(occurrence.conversation);
    best.positions.push(occurrence.position);
  }
  return groups;
}

export function discoverRoutine(
  sources: readonly RoutineSource[],
  options: DiscoveryOptions = defaultDiscoveryOptions,
): Routine | null {
  const parts = sources.map((source) => ({ id: source.conversation_id, ...answerParts(source.turns) }));
  const needed = Math.max(options.minConversations, Math.ceil(options.minSupport * sources.length));
  const stepCandidates = groupPhrasings(
    parts.flatMap((part) =>
      part.steps.map((text, index) => ({
        text,
        conversation: part.id,
        position: part.steps.length > 1 ? index / (part.steps.length - 1) : 0,
      })),
    ),
    options.similarity,
  );
  const stepGroups = mergeAlternatives(stepCandidates)
    .filter((group) => group.conversations.size >= needed)
    .sort((a, b) => median(a.positions) - median(b.positions));
  if (stepGroups.length < 2) return null;
  const frequent = (texts: Array<{ text: string; conversation: string }>) =>
    groupPhrasings(
      texts.map((text) => ({ ...text, position: 0 })),
      options.similarity,
    )
      .filter((group) => group.conversations.size >= needed)
      .sort((a, b) => b.conversations.size - a.conversations.size);
  const preconditions = frequent(
    parts.flatMap((part) => part.before.map((text) => ({ text, conversation: part.id }))),
  );
  const outcomes = frequent(
    parts.flatMap((part) => part.after.map((text) => ({ text, conversation: part.id }))),
  );
  const followers = parts
    .filter(
      (part) =>
        stepGroups.filter((group) => group.conversations.has(part.id)).length * 2 >= stepGroups.length,
    )
    .map((part) => part.id)
    .sort();
  return {
    steps: stepGroups.map((group) => ({ text: commonPhrasing(group), support: group.conversations.size })),
    preconditions: preconditions.map(commonPhrasing),
    outcome: outcomes[0] ? commonPhrasing(outcomes[0]) : null,
    conversation_ids: followers,
  };
}

/**
 * Two phrasings of one step rarely share enough words ("Confirm the sign-in on your mobile",
 * "Approve the sign-in on your phone"), but they never occur in the same conversation and
 * they come at the same point of the procedure. Groups like that, sharing some terms, merge.
 */
function mergeAlternatives(groups: Group[]): Group[] {
  const merged: Group[] = [];
  for (const group of [...groups].sort((a, b) => b.conversations.size - a.conversations.size)) {
    const partner = merged.find((candidate) => {
      let shared = 0;
      for (const id of group.conversations) if (candidate.conversations.has(id)) shared++;
      return (
        shared <= 0.05 * Math.min(group.conversations.size, candidate.conversations.size) &&
        Math.abs(median(group.positions) - median(candidate.positions)) <= 0.15 &&
        jaccardOf(group.terms, candidate.terms) >= 0.2
      );
    });
    if (!partner) {
      merged.push({
        ...group,
        terms: new Set(group.terms),
        phrasings: new Map(group.phrasings),
        conversations: new Set(group.conversations),
        positions: [...group.positions],
      });
      continue;
    }
    for (const term of group.terms) partner.terms.add(term);
    for (const [text, count] of group.phrasings)
      partner.phrasings.set(text, (partner.phrasings.get(text) ?? 0) + count);
    for (const id of group.conversations) partner.conversations.add(id);
    partner.positions.push(...group.positions);
  }
  return merged;
}

/** The phrasing most conversations used (shortest on a tie). */
function commonPhrasing(group: Group): string {
  return (
    [...group.phrasings].sort(
      (a, b) => b[1] - a[1] || a[0].length - b[0].length || (a[0] < b[0] ? -1 : 1),
    )[0]?.[0] ?? ''
  );
}

/**
 * A title a reader understands without a model: the first and the last step ("Gå til
 * passord.firma.no og velg Glemt passord … Logg inn i VPN-klienten med det nye passordet"),
 * each cut to ten words, markup left out. Keyword lists ("passord, vpn, nytt") said nothing.
 */
export function routineTitle(steps: ReadonlyArray<{ text: string }>): string {
  const clip = (text: string) => {
    const words = text
      .replace(/[*_`]+/g, '')
      .replace(/[.:;!]+$/, '')
      .split(/\s+/)
      .filter(Boolean);
    return words.length > 10 ? `${words.slice(0, 10).join(' ')} …` : words.join(' ');
  };
  const first = clip(steps[0]?.text ?? '');
  const last = clip(steps.at(-1)?.text ?? '');
  return steps.length > 1 && last !== first ? `${first} … ${last}` : first;
}

/** The terms of a routine's steps, the basis of merging and of its stable id. */
export function routineTerms(steps: ReadonlyArray<{ text: string }>): Set<string> {
  return new Set(steps.flatMap((step) => terms(step.text)));
}

/** An id from a routine's steps: the same steps give the same id on every run. */
export function routineId(steps: ReadonlyArray<{ text: string }>): string {
  const signature = [...routineTerms(steps)].sort().join(' ');
  return `routine-${createHash('sha256').update(signature).digest('hex').slice(0, 12)}`;
}

export function jaccardOf(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  let shared = 0;
  for (const term of a) if (b.has(term)) shared++;
  const union = a.size + b.size - shared;
  return union === 0 ? 0 : shared / union;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
