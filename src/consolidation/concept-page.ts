/**
 * A concept page: markdown with a title, a summary, body sections and a numbered citation
 * `[n]` after each claim, then the structural sections "Related concepts" (links to other
 * concept pages as `[Name](slug.md)`) and "Sources" (the cited passages). The validator
 * checks it (page-checks.ts); publishers render it for their knowledge base.
 *
 * The offline writer is extractive: it quotes, never paraphrases, so every sentence on the
 * page is one a source says, cited to the passage it came from.
 */
import { createHash } from 'node:crypto';
import { sourceLink } from '../storage/object-links.js';
import { sentencesOf } from './keyphrases.js';
import { namePattern, type Passage } from './passages.js';
import { cleanHeading } from './sources.js';

export interface RelatedLink {
  slug: string;
  name: string;
}

export interface PageSection {
  heading: string;
  paragraphs: { text: string; citations: number[] }[];
}

export interface PageDraft {
  title: string;
  summary: { text: string; citations: number[] };
  sections: PageSection[];
  related: RelatedLink[];
}

export const relatedHeading = 'Related concepts';
export const sourcesHeading = 'Sources';
/** Sections whose lines are links, not claims: they cite nothing. */
export const structuralHeadings: readonly string[] = [relatedHeading, sourcesHeading];

/**
 * The page's markdown. `linkBase` is the service's public address (`publicBaseUrl`): a source
 * with no http(s) URL (a file from a share, an attachment) is linked as its stored object under
 * it, since the page is read in another system, where a file:// path or a bare key opens nothing.
 */
export function renderPage(draft: PageDraft, passages: readonly Passage[], linkBase: string): string {
  const cite = (citations: readonly number[]) => citations.map((citation) => ` [${citation}]`).join('');
  const lines = [`# ${draft.title}`, '', `${draft.summary.text}${cite(draft.summary.citations)}`, ''];
  for (const section of draft.sections) {
    lines.push(`## ${section.heading}`, '');
    const bullets = section.paragraphs.length > 1;
    for (const paragraph of section.paragraphs) {
      lines.push(`${bullets ? '- ' : ''}${paragraph.text}${cite(paragraph.citations)}`);
      if (!bullets) lines.push('');
    }
    if (bullets) lines.push('');
  }
  if (draft.related.length > 0) {
    lines.push(`## ${relatedHeading}`, '');
    for (const link of draft.related) lines.push(`- [${link.name}](${link.slug}.md)`);
    lines.push('');
  }
  const cited = new Set(
    [draft.summary.citations, ...draft.sections.flatMap((s) => s.paragraphs.map((p) => p.citations))].flat(),
  );
  lines.push(`## ${sourcesHeading}`, '');
  for (const passage of passages) {
    if (!cited.has(passage.citation)) continue;
    const where = sourceLabel(passage);
    const link = sourceLink(passage.url, passage.key, linkBase) ?? passage.key;
    lines.push(`${passage.citation}. [${escapeLinkText(where)}](${link})`);
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

/**
 * The page with its "Related concepts" links kept only to the concepts `hasPage` says have a
 * page: a link to a page that was never written (no passage named the concept, the validator
 * rejected it) opens nothing where the page is read. The section goes when no link is left.
 */
export function keepExistingLinks(markdown: string, hasPage: (slug: string) => boolean): string {
  const lines = markdown.split('\n');
  const start = lines.indexOf(`## ${relatedHeading}`);
  if (start < 0) return markdown;
  let end = lines.findIndex((line, index) => index > start && line.startsWith('## '));
  if (end < 0) end = lines.length;
  const links = lines.slice(start + 1, end).filter((line) => {
    const link = /^- \[.*\]\(([^()\s/]+)\.md\)$/.exec(line);
    return link ? hasPage(link[1] as string) : false;
  });
  const section = links.length > 0 ? [`## ${relatedHeading}`, '', ...links, ''] : [];
  return [...lines.slice(0, start), ...section, ...lines.slice(end)].join('\n');
}

/** "Routine Vacuuming › The Autovacuum Daemon": the title, then the headings under it. */
export function sourceLabel(passage: Pick<Passage, 'title' | 'heading_path'>): string {
  const parts = [passage.title];
  for (const heading of passage.heading_path) {
    const last = parts[parts.length - 1] as string;
    if (heading !== last && !last.endsWith(` ${heading}`) && cleanHeading(last) !== heading)
      parts.push(heading);
  }
  return parts.join(' › ');
}

function escapeLinkText(text: string): string {
  return text.replace(/([[\]])/g, '\\$1');
}

export function contentHashOf(markdown: string): string {
  return createHash('sha256').update(markdown).digest('hex');
}

export interface ExtractiveOptions {
  maxPoints: number;
  maxSentenceCharacters: number;
}

export const extractiveDefaults: ExtractiveOptions = { maxPoints: 6, maxSentenceCharacters: 400 };

/** An extractive page: a defining sentence as summary, then key sentences, all quoted. */
export function extractiveDraft(
  concept: { name: string; aliases: readonly string[] },
  passages: readonly Passage[],
  related: readonly RelatedLink[],
  options: Partial<ExtractiveOptions> = {},
): PageDraft | undefined {
  const { maxPoints, maxSentenceCharacters } = { ...extractiveDefaults, ...options };
  if (passages.length === 0) return undefined;
  const pattern = namePattern([concept.name, ...concept.aliases]);
  const sentences = passages.map((passage) => {
    const said = sentencesOf(passage.text);
    return said
      .map((sentence, index) => ({ text: standalone(said, index, pattern), sentence, index }))
      .filter(
        (item): item is { text: string; sentence: string; index: number } =>
          item.text !== undefined &&
          item.sentence.length >= 20 &&
          item.sentence.length <= maxSentenceCharacters,
      )
      .map(({ text, index }) => ({
        sentence: text,
        index,
        citation: passage.citation,
        mentions: mentions(text, pattern),
      }));
  });
  const all = sentences.flat();
  const definition =
    all.find((item) => definitional(item.sentence, pattern)) ??
    all.find((item) => item.mentions > 0) ??
    all[0];
  if (!definition) return undefined;
  // A sentence several sources say is cited to all of them (corroboration), and said once.
  const citationsOf = new Map<string, number[]>();
  for (const item of all) {
    const key = normalised(item.sentence);
    const list = citationsOf.get(key) ?? [];
    if (!list.includes(item.citation)) list.push(item.citation);
    citationsOf.set(key, list);
  }
  const cite = (sentence: string) => citationsOf.get(normalised(sentence)) ?? [];
  const seen = new Set([normalised(definition.sentence)]);
  const points: { text: string; citations: number[] }[] = [];
  // In turns across passages: each passage's best sentences about the concept.
  // A passage chosen for its heading (or detection's quote) may not name the concept in a
  // sentence: its opening sentence speaks for it, so every source loaded is heard.
  const queues = sentences.map((list) => {
    const naming = list
      .filter((item) => item.mentions > 0)
      .sort((a, b) => b.mentions - a.mentions || a.index - b.index);
    return naming.length > 0 ? naming : list.slice(0, 1);
  });
  for (let round = 0; points.length < maxPoints && queues.some((queue) => queue.length > round); round++) {
    for (const queue of queues) {
      const item = queue[round];
      if (!item || points.length >= maxPoints) continue;
      const key = normalised(item.sentence);
      if (seen.has(key)) continue;
      seen.add(key);
      points.push({ text: item.sentence, citations: cite(item.sentence) });
    }
  }
  const sections: PageSection[] = points.length > 0 ? [{ heading: 'Key points', paragraphs: points }] : [];
  return {
    title: concept.name,
    summary: { text: definition.sentence, citations: cite(definition.sentence) },
    sections,
    related: [...related],
  };
}

/** A sentence opening on a word that points back ("It is also used to scrape wax..."). */
const pointsBack =
  /^(it|its|this|that|these|those|they|their|them|he|she|his|her|such|here|there|den|dens|det|dets|dette|disse|de|deres|han|hun|hans|hennes|slik|slike)\b/i;

/**
 * The sentence as a reader can take it alone: one that opens on a pronoun is quoted with the
 * sentence before it, whatever "it" was; the first sentence of a passage that points back to
 * something outside it is left out, unless it names the concept itself.
 */
export function standalone(sentences: readonly string[], index: number, name: RegExp): string | undefined {
  const sentence = sentences[index] as string;
  if (!pointsBack.test(sentence)) return sentence;
  const before = sentences[index - 1];
  if (before) return `${before} ${sentence}`;
  return mentions(sentence, name) > 0 ? sentence : undefined;
}

function mentions(sentence: string, pattern: RegExp): number {
  pattern.lastIndex = 0;
  return sentence.match(pattern)?.length ?? 0;
}

/** "VACUUM reclaims storage ...", "A tablespace is ...", "WAL, the write-ahead log, ...". */
function definitional(sentence: string, pattern: RegExp): boolean {
  pattern.lastIndex = 0;
  const match = pattern.exec(sentence);
  if (!match || match.index > 12) return false;
  const after = sentence.slice(match.index + match[0].length);
  return /^\s*(\([^)]*\)\s*)?(is|are|refers to|means|denotes|er|betyr|viser til|,\s+(a|an|the|en|et|ei)\s)\b/i.test(
    after,
  );
}

function normalised(sentence: string): string {
  return sentence
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}
