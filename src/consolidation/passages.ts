/**
 * The passages a concept page is written from: the sections of its sources that name the
 * concept (its name or an alias, as whole words), best first within each source, taken in
 * turns across sources (so one long source cannot fill the budget) until the token budget
 * is spent. Passages are numbered from 1; the page cites them by number.
 */
import { approximateTokens } from '../markdown/tokens.js';
import type { LoadedSource } from './sources.js';

export interface Passage {
  citation: number;
  source_id: string;
  key: string;
  title: string;
  url: string | null;
  heading_path: string[];
  text: string;
}

export interface PassageOptions {
  tokenBudget: number;
  maxPerSource: number;
  /** Characters of one passage at most (a long section is cut at a sentence). */
  maxCharacters: number;
}

export const passageDefaults: PassageOptions = { tokenBudget: 1500, maxPerSource: 2, maxCharacters: 1200 };

/** A pattern matching any of the names as whole words, case-insensitive. */
export function namePattern(names: readonly string[]): RegExp {
  const escaped = [...new Set(names.filter((name) => name.trim().length > 0))]
    .sort((a, b) => b.length - a.length)
    .map((name) =>
      name
        .trim()
        .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
        .replace(/\s+/g, '[\\s-]+')
        // A plural or possessive still names the concept.
        .concat("(?:e?s|'s)?"),
    );
  return new RegExp(`(?<![\\p{L}\\p{N}_])(?:${escaped.join('|')})(?![\\p{L}\\p{N}_])`, 'giu');
}

interface Candidate {
  source: LoadedSource;
  heading_path: string[];
  text: string;
  mentions: number;
  order: number;
}

/** Where detection saw the concept in a source: its fallback passage. */
export interface SourceEvidence {
  heading_path: string[];
  quote: string;
}

/**
 * Passages for a concept from its sources, in the order of `sources` (best source first). A
 * source none of whose sections names the concept in its text (it said so in a table, or in
 * other words that the map joined) gives the sentences detection quoted from it, when the
 * source still contains them.
 */
export function selectPassages(
  names: readonly string[],
  sources: readonly (LoadedSource & { evidence?: readonly SourceEvidence[] | undefined })[],
  options: Partial<PassageOptions> = {},
): Passage[] {
  const { tokenBudget, maxPerSource, maxCharacters } = { ...passageDefaults, ...options };
  const pattern = namePattern(names);
  const perSource = sources.map((source) => {
    const found = candidatesOf(source, pattern, maxCharacters).slice(0, maxPerSource);
    return found.length > 0 ? found : evidenceOf(source, maxPerSource);
  });
  const passages: Passage[] = [];
  let spent = 0;
  for (let round = 0; round < maxPerSource; round++) {
    for (const candidates of perSource) {
      const candidate = candidates[round];
      if (!candidate) continue;
      const tokens = approximateTokens(candidate.text);
      if (spent + tokens > tokenBudget && passages.length > 0) continue;
      spent += tokens;
      passages.push({
        citation: passages.length + 1,
        source_id: candidate.source.source_id,
        key: candidate.source.key,
        title: candidate.source.title,
        url: candidate.source.url,
        heading_path: candidate.heading_path,
        text: candidate.text,
      });
    }
  }
  return passages;
}

function candidatesOf(source: LoadedSource, pattern: RegExp, maxCharacters: number): Candidate[] {
  const candidates: Candidate[] = [];
  let order = 0;
  for (const section of source.sections) {
    const headingMentions = count(section.heading_path.join(' '), pattern);
    const text = section.paragraphs.join('\n\n');
    const mentions = count(text, pattern);
    if (mentions + headingMentions === 0 || text.length === 0) continue;
    candidates.push({
      source,
      heading_path: section.heading_path,
      text: cutAtSentence(text, maxCharacters, pattern),
      mentions: mentions + 2 * headingMentions,
      order: order++,
    });
  }
  // Most mentions first; among equals the earlier section (definitions come first).
  return candidates.sort((a, b) => b.mentions - a.mentions || a.order - b.order);
}

function evidenceOf(
  source: LoadedSource & { evidence?: readonly SourceEvidence[] | undefined },
  maxPerSource: number,
): Candidate[] {
  const text = folded(source.sections.flatMap((section) => section.paragraphs).join(' '));
  return (source.evidence ?? [])
    .filter((item) => item.quote.length > 0 && text.includes(folded(item.quote.replace(/\.\.\.$/, ''))))
    .slice(0, maxPerSource)
    .map((item, order) => ({
      source,
      heading_path: item.heading_path,
      text: item.quote,
      mentions: 0,
      order,
    }));
}

function folded(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').trim();
}

function count(text: string, pattern: RegExp): number {
  pattern.lastIndex = 0;
  return text.match(pattern)?.length ?? 0;
}

/** At most `max` characters, ending at a sentence, starting near the first mention. */
function cutAtSentence(text: string, max: number, pattern: RegExp): string {
  if (text.length <= max) return text;
  pattern.lastIndex = 0;
  const first = pattern.exec(text)?.index ?? 0;
  let start = 0;
  if (first > max / 2) {
    const before = text.lastIndexOf('. ', first);
    start = before > 0 ? before + 2 : 0;
  }
  const window = text.slice(start, start + max);
  const end = window.lastIndexOf('. ');
  return (end > max / 3 ? window.slice(0, end + 1) : window).trim();
}
