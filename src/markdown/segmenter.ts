/**
 * Token-aware markdown segmentation. The markdown is read as blocks (headings, fenced code,
 * tables, paragraphs and lists); headings are hard boundaries and give each segment its
 * `heading_path`. Blocks of one section are packed up to `maxTokens`; a block too large on
 * its own is split: prose at sentences (then words), code and tables at line boundaries,
 * each piece re-fenced or given the table header again so it stays valid markdown. A new
 * segment of the same section starts with up to `overlapTokens` of the previous one's
 * closing sentences. Segments under `minTokens` (a heading with one line) are merged into
 * the next segment when that is their own continuation or subsection (taking its path), or
 * into the previous one of the same path, when the result fits.
 */
import { approximateTokens, type TokenCounter } from './tokens.js';

export interface Segment {
  text: string;
  token_count: number;
  heading_path: string[];
}

export interface SegmentOptions {
  maxTokens: number;
  overlapTokens: number;
  minTokens: number;
  countTokens: TokenCounter;
}

type BlockKind = 'heading' | 'code' | 'table' | 'text';

interface Block {
  kind: BlockKind;
  text: string;
  level?: number;
}

interface Unit {
  text: string;
  tokens: number;
  /** Prose: may lend its closing sentences as overlap to the next segment. */
  prose: boolean;
}

interface Draft {
  units: Unit[];
  path: string[];
}

const fenceOpen = /^ {0,3}(`{3,}|~{3,})/;
const headingLine = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;

export function parseBlocks(markdown: string): Block[] {
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  const blocks: Block[] = [];
  let text: string[] = [];
  const flush = () => {
    if (text.length > 0) blocks.push({ kind: 'text', text: text.join('\n') });
    text = [];
  };
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] as string;
    const fence = fenceOpen.exec(line);
    if (fence) {
      flush();
      const marker = fence[1] as string;
      const close = new RegExp(`^ {0,3}${marker[0] === '`' ? '`' : '~'}{${marker.length},}[ \\t]*$`);
      const body = [line];
      while (++index < lines.length) {
        body.push(lines[index] as string);
        if (close.test(lines[index] as string)) break;
      }
      blocks.push({ kind: 'code', text: body.join('\n') });
      continue;
    }
    const heading = headingLine.exec(line);
    if (heading) {
      flush();
      blocks.push({ kind: 'heading', text: line.trim(), level: (heading[1] as string).length });
      continue;
    }
    if (line.trimStart().startsWith('|')) {
      flush();
      const rows = [line];
      while (index + 1 < lines.length && (lines[index + 1] as string).trimStart().startsWith('|'))
        rows.push(lines[++index] as string);
      blocks.push({ kind: 'table', text: rows.join('\n') });
      continue;
    }
    if (line.trim() === '') flush();
    else text.push(line);
  }
  flush();
  return blocks;
}

/**
 * Heading text without inline markdown (for `heading_path`): link targets, code backticks and
 * emphasis delimiters go, escapes are undone, and underscores inside words stay
 * (`markdown\_storage\_writer` and `` `markdown_storage_writer` `` both give
 * markdown_storage_writer).
 */
export function plainHeading(line: string): string {
  const escaped = (headingLine.exec(line)?.[2] ?? line)
    // Escaped punctuation is hidden from the emphasis rule as private-use characters.
    .replace(/\\([!-/:-@[-`{-~])/g, (_, character: string) => hide(character));
  const codeSpans = escaped.replace(/(`+)(.+?)\1/g, (_, _fence: string, code: string) =>
    [...code.trim()].map(hide).join(''),
  );
  return codeSpans
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(emphasis, '$1$3')
    .replace(/`+/g, '')
    .replace(/[\uE000-\uE07F]/g, (character) => String.fromCharCode(character.charCodeAt(0) - 0xe000))
    .trim();
}

/** `*x*`, `**x**`, `_x_`, `__x__` delimiters that open after a non-word character and close before one. */
const emphasis = /(^|[^\p{L}\p{N}])(\*{1,3}|_{1,3})(?=\S)(.*?\S)\2(?![\p{L}\p{N}])/gu;

function hide(character: string): string {
  const code = character.charCodeAt(0);
  return code < 0x80 ? String.fromCharCode(0xe000 + code) : character;
}

export function segmentMarkdown(markdown: string, options: SegmentOptions): Segment[] {
  const { countTokens } = options;
  const maxTokens = Math.max(8, options.maxTokens);
  const overlapTokens = Math.min(Math.max(0, options.overlapTokens), Math.floor(maxTokens / 2));
  const drafts: Draft[] = [];
  const stack: { level: number; text: string }[] = [];
  let current: Draft = { units: [], path: [] };
  let used = 0;

  const emit = () => {
    if (current.units.length > 0) drafts.push(current);
  };
  const add = (unit: Unit) => {
    if (current.units.length > 0 && used + unit.tokens + 1 > maxTokens) {
      const previous = current;
      emit();
      const overlap =
        overlapTokens > 0 && unit.prose
          ? closingSentences(previous.units, overlapTokens, countTokens)
          : undefined;
      current = { units: [], path: previous.path };
      used = 0;
      if (overlap && overlap.tokens + unit.tokens + 1 <= maxTokens) {
        current.units.push(overlap);
        used = overlap.tokens;
      }
    }
    current.units.push(unit);
    used += unit.tokens + (current.units.length > 1 ? 1 : 0);
  };

  for (const block of parseBlocks(markdown)) {
    if (block.kind === 'heading') {
      emit();
      const level = block.level ?? 1;
      while (stack.length > 0 && (stack[stack.length - 1] as { level: number }).level >= level) stack.pop();
      stack.push({ level, text: plainHeading(block.text) });
      current = { units: [], path: stack.map((entry) => entry.text) };
      used = 0;
    }
    const tokens = countTokens(block.text);
    if (tokens <= maxTokens) {
      add({ text: block.text, tokens, prose: block.kind === 'text' });
      continue;
    }
    // Prose pieces leave room for the overlap that will precede them.
    const budget = block.kind === 'text' ? maxTokens - overlapTokens - 1 : maxTokens;
    for (const piece of splitBlock(block, budget, countTokens)) add(piece);
  }
  emit();
  return mergeSmall(drafts, options.minTokens, maxTokens, countTokens);
}

/** Pieces of a block larger than `maxTokens`, each within it. */
function splitBlock(block: Block, maxTokens: number, countTokens: TokenCounter): Unit[] {
  if (block.kind === 'code') {
    const lines = block.text.split('\n');
    const open = lines[0] as string;
    const fence = (fenceOpen.exec(open)?.[1] as string) ?? '```';
    const closed =
      lines.length > 1 &&
      new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}[ \\t]*$`).test(
        lines[lines.length - 1] as string,
      );
    const body = lines.slice(1, closed ? -1 : undefined);
    const overhead = countTokens(open) + countTokens(fence) + 2;
    return packLines(body, maxTokens - overhead, countTokens).map((chunk) =>
      unit(`${open}\n${chunk}\n${fence}`, countTokens, false),
    );
  }
  if (block.kind === 'table') {
    const lines = block.text.split('\n');
    const header = /^\s*\|[\s:|-]+\|\s*$/.test(lines[1] ?? '') ? lines.slice(0, 2) : [];
    const headerText = header.join('\n');
    const overhead = header.length > 0 ? countTokens(headerText) + 1 : 0;
    return packLines(lines.slice(header.length), maxTokens - overhead, countTokens).map((chunk) =>
      unit(header.length > 0 ? `${headerText}\n${chunk}` : chunk, countTokens, false),
    );
  }
  // Prose: lines (list items) first; a line too long is split at sentences, then words.
  return packLines(block.text.split('\n'), maxTokens, countTokens).map((chunk) =>
    unit(chunk, countTokens, true),
  );
}

function unit(text: string, countTokens: TokenCounter, prose: boolean): Unit {
  return { text, tokens: countTokens(text), prose };
}

/** Joins consecutive `lines` into chunks within `budget` tokens; a line over it is cut at words. */
function packLines(
  lines: readonly string[],
  budget: number,
  countTokens: TokenCounter,
  separator = '\n',
): string[] {
  const limit = Math.max(4, budget);
  const chunks: string[] = [];
  let chunk: string[] = [];
  let used = 0;
  const flush = () => {
    if (chunk.length > 0) chunks.push(chunk.join(separator));
    chunk = [];
    used = 0;
  };
  for (const line of lines) {
    const tokens = countTokens(line);
    if (tokens > limit) {
      flush();
      const sentences = separator === '\n' ? line.split(/(?<=[.!?:;])\s+(?=\S)/) : [];
      chunks.push(
        ...(sentences.length > 1
          ? packLines(sentences, limit, countTokens, ' ')
          : cutWords(line, limit, countTokens)),
      );
      continue;
    }
    if (chunk.length > 0 && used + tokens + 1 > limit) flush();
    chunk.push(line);
    used += tokens + (chunk.length > 1 ? 1 : 0);
  }
  flush();
  return chunks;
}

/** A line too long for any segment, cut between words (or inside a very long word). */
function cutWords(line: string, limit: number, countTokens: TokenCounter): string[] {
  const chunks: string[] = [];
  let chunk = '';
  let used = 0;
  const flush = () => {
    if (chunk.trim()) chunks.push(chunk.trimEnd());
    chunk = '';
    used = 0;
  };
  for (const word of line.split(/(?<=\s)/)) {
    const tokens = countTokens(word);
    if (tokens > limit) {
      // A single "word" over the limit (minified code, base64): windows of characters, each
      // counted on its own (never the whole remainder again: that would be quadratic).
      flush();
      for (let offset = 0; offset < word.length; ) {
        let size = Math.min(word.length - offset, limit * 4);
        while (size > 1 && countTokens(word.slice(offset, offset + size)) > limit)
          size = Math.floor(size / 2);
        chunks.push(word.slice(offset, offset + size));
        offset += size;
      }
      continue;
    }
    if (chunk && used + tokens > limit) flush();
    chunk += word;
    used += tokens;
  }
  flush();
  return chunks;
}

/** The last sentences of the last prose unit, within `budget` tokens, as an overlap unit. */
function closingSentences(
  units: readonly Unit[],
  budget: number,
  countTokens: TokenCounter,
): Unit | undefined {
  const last = units[units.length - 1];
  if (!last?.prose) return undefined;
  const sentences = last.text.split(/(?<=[.!?])\s+(?=\S)/);
  let text = '';
  for (let index = sentences.length - 1; index >= 0; index--) {
    const candidate = text ? `${sentences[index]} ${text}` : (sentences[index] as string);
    if (countTokens(candidate) > budget) break;
    text = candidate;
  }
  return text ? unit(text, countTokens, true) : undefined;
}

function mergeSmall(
  drafts: Draft[],
  minTokens: number,
  maxTokens: number,
  countTokens: TokenCounter,
): Segment[] {
  // The approximate counter is additive over blank-line joins (a newline run is one token),
  // so its total is the sum of the parts; a real tokenizer counts the joined text again.
  const additive = countTokens === approximateTokens;
  const segments: Segment[] = drafts.map((draft) => {
    const text = draft.units.map((part) => part.text).join('\n\n');
    const sum = draft.units.reduce((total, part) => total + part.tokens, draft.units.length - 1);
    return { text, token_count: additive ? sum : countTokens(text), heading_path: draft.path };
  });
  if (minTokens <= 0) return segments;
  const merged: Segment[] = [];
  for (let index = 0; index < segments.length; index++) {
    let segment = segments[index] as Segment;
    // Small (a heading whose text is one line): joined to what follows while that is its own
    // continuation or subsection, taking the deeper path, which still names this heading.
    // Headings are hard boundaries otherwise: no section is filed under another's path.
    while (segment.token_count < minTokens && index + 1 < segments.length) {
      const next = segments[index + 1] as Segment;
      if (!withinSection(next.heading_path, segment.heading_path)) break;
      if (segment.token_count + next.token_count + 1 > maxTokens) break;
      segment = joined(segment, next, next.heading_path, countTokens);
      index++;
    }
    const previous = merged[merged.length - 1];
    if (
      segment.token_count < minTokens &&
      previous &&
      samePath(segment.heading_path, previous.heading_path) &&
      previous.token_count + segment.token_count + 1 <= maxTokens
    ) {
      merged[merged.length - 1] = joined(previous, segment, previous.heading_path, countTokens);
    } else merged.push(segment);
  }
  return merged;
}

function samePath(first: readonly string[], second: readonly string[]): boolean {
  return first.length === second.length && withinSection(first, second);
}

/** True when `path` is `section` or one of its subsections. */
function withinSection(path: readonly string[], section: readonly string[]): boolean {
  return section.length <= path.length && section.every((heading, depth) => path[depth] === heading);
}

function joined(first: Segment, second: Segment, path: string[], countTokens: TokenCounter): Segment {
  const text = `${first.text}\n\n${second.text}`;
  const additive = countTokens === approximateTokens;
  return {
    text,
    token_count: additive ? first.token_count + second.token_count + 1 : countTokens(text),
    heading_path: path,
  };
}
