/**
 * Markdown made safe to hand to a translating model: the parts that must come back byte for
 * byte (fenced code blocks, inline code, link and image targets, reference definitions, bare
 * URLs) are swapped for numbered placeholders `⟦n⟧`, the text is cut into chunks at blank
 * lines, and a translated chunk is checked against its original before the parts are put back.
 */

export interface Protected {
  /** The markdown with placeholders. */
  text: string;
  /** Original text of placeholder n at index n. */
  parts: string[];
  /** Parts 0 to literals - 1 are placeholder-looking tokens of the source, put back as they are. */
  literals: number;
}

const INLINE_CODE = /(`+)[^`\n](?:[^\n]*?[^`\n])?\1(?!`)/g;
const REFERENCE_DEFINITION = /^ {0,3}\[[^\]\n]+\]:[ \t]*\S+.*$/gm;
const LINK_TARGET = /(\]\()([^()\s]*(?:\([^()\s]*\))?[^()\s]*(?:\s+"[^"]*")?)(\))/g;
const BARE_URL = /\b(?:https?|ftp|mailto):[^\s<>()⟦⟧"'`]+[^\s<>()⟦⟧"'`.,;:!?]/g;
const PLACEHOLDER = /⟦(\d+)⟧/g;

export function protect(markdown: string): Protected {
  const parts: string[] = [];
  const hold = (original: string) => {
    parts.push(original);
    return `⟦${parts.length - 1}⟧`;
  };
  // Tokens that already look like placeholders in the source are held first, so a document
  // quoting `⟦1⟧` cannot be mistaken for protected parts.
  const source = markdown.replace(PLACEHOLDER, (token) => hold(token));
  const literals = parts.length;
  const text = holdFences(source, hold)
    .replace(INLINE_CODE, (code) => hold(code))
    .replace(REFERENCE_DEFINITION, (line) => hold(line))
    .replace(
      LINK_TARGET,
      (_match, open: string, target: string, close: string) => `${open}${hold(target)}${close}`,
    )
    .replace(BARE_URL, (url) => hold(url));
  return { text, parts, literals };
}

/** Replaces each fenced code block (an unclosed one runs to the end) by `hold(block)`. */
function holdFences(markdown: string, hold: (original: string) => string): string {
  const lines = markdown.split('\n');
  const out: string[] = [];
  for (let index = 0; index < lines.length; index++) {
    const opening = /^ {0,3}(`{3,}|~{3,})/.exec(lines[index] as string);
    if (!opening) {
      out.push(lines[index] as string);
      continue;
    }
    const marker = opening[1] as string;
    const closing = new RegExp(`^ {0,3}${marker[0] === '`' ? '`' : '~'}{${marker.length},}[ \\t]*$`);
    let end = index + 1;
    while (end < lines.length && !closing.test(lines[end] as string)) end++;
    end = Math.min(end, lines.length - 1);
    out.push(hold(lines.slice(index, end + 1).join('\n')));
    index = end;
  }
  return out.join('\n');
}

/**
 * Puts the protected parts back. A part may itself hold an earlier (lower-numbered) placeholder,
 * for inline code inside a link target, so parts are restored recursively; a part that is a
 * placeholder-looking token of the source text itself is put back literally.
 */
export function restore(text: string, held: Pick<Protected, 'parts' | 'literals'>): string {
  return text.replace(PLACEHOLDER, (token, index: string) => {
    const part = held.parts[Number(index)];
    if (part === undefined) return token;
    return Number(index) < held.literals ? part : restore(part, held);
  });
}

/**
 * Chunks of at most `limit` characters, cut only at blank lines; a single block longer than
 * the limit stays whole (cutting inside a paragraph or table would break its structure).
 * Joining the chunks gives the text back exactly.
 */
export function chunk(text: string, limit: number): string[] {
  const pieces = text.split(/(\n[ \t]*\n+)/); // blocks and their separators, alternating
  const chunks: string[] = [];
  let current = '';
  for (let index = 0; index < pieces.length; index += 2) {
    const block = `${pieces[index] ?? ''}${pieces[index + 1] ?? ''}`;
    if (current !== '' && current.length + block.length > limit) {
      chunks.push(current);
      current = '';
    }
    current += block;
  }
  if (current !== '') chunks.push(current);
  return chunks;
}

/** True when a chunk has nothing to translate (only placeholders, markup and whitespace). */
export function nothingToTranslate(text: string): boolean {
  return !/\p{L}/u.test(text.replace(PLACEHOLDER, ''));
}

export interface Shape {
  headings: number;
  placeholders: string[];
  fences: number;
}

/** What a translation must keep: heading lines, the placeholders (in any order), code fences. */
export function shapeOf(text: string): Shape {
  return {
    headings: (text.match(/^ {0,3}#{1,6}(?:[ \t]|$)/gm) ?? []).length,
    placeholders: [...text.matchAll(PLACEHOLDER)].map((match) => match[0]).sort(),
    fences: (text.match(/^ {0,3}(?:`{3,}|~{3,})/gm) ?? []).length,
  };
}

/** Why `translated` does not keep the shape of `original`, or undefined when it does. */
export function shapeMismatch(original: string, translated: string): string | undefined {
  const want = shapeOf(original);
  const got = shapeOf(translated);
  if (want.headings !== got.headings) return `expected ${want.headings} headings, got ${got.headings}`;
  if (want.fences !== got.fences) return `expected ${want.fences} code fences, got ${got.fences}`;
  const missing = want.placeholders.filter((token) => !got.placeholders.includes(token));
  if (missing.length > 0) return `protected code or links ${missing.join(', ')} are missing`;
  if (got.placeholders.length !== want.placeholders.length)
    return `protected code or links were repeated or invented (${got.placeholders.join(', ')})`;
  return undefined;
}
