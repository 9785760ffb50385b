/**
 * What HTML must be before it is parsed (html-to-markdown.ts, the Teams message reader): text,
 * not binary, and not nested past a bound, checked by a scan that needs no DOM, so hostile
 * input is refused before htmlparser2 builds anything.
 */

export class HtmlInputError extends Error {
  override name = 'HtmlInputError';
  readonly permanent = true;
}

/** Refuses text that is really binary (NUL bytes or many control characters). */
export function assertTextual(text: string, what = 'input'): void {
  const sample = text.slice(0, 8192);
  let control = 0;
  for (let index = 0; index < sample.length; index++) {
    const code = sample.charCodeAt(index);
    if (code === 0) throw new HtmlInputError(`${what} is binary, not HTML (it holds NUL bytes)`);
    if ((code < 32 && code !== 9 && code !== 10 && code !== 13 && code !== 12) || code === 0xfffd) control++;
  }
  if (sample.length > 0 && control / sample.length > 0.05) {
    throw new HtmlInputError(
      `${what} is binary, not HTML (${control} control or undecodable characters in its first ${sample.length})`,
    );
  }
}

/** Deepest element nesting accepted; real pages stay far below (the PostgreSQL docs: about 20). */
export const maxNesting = 5000;

/** Elements that never hold content, or whose end tag is optional (the parser closes them). */
const unnestedTags = new Set(
  'area base br col embed hr img input link meta source track wbr p li dt dd td th tr thead tbody tfoot option optgroup colgroup rt rp html head body'.split(
    ' ',
  ),
);

/**
 * Refuses HTML nesting elements deeper than `maxNesting`, by a linear pre-scan of its tags.
 * htmlparser2 keeps open elements in an array it grows with `unshift`, so a page of 100,000
 * unclosed `<div>`s costs minutes of parsing; this check makes that a clear failure instead.
 */
export function assertNestingBounded(html: string, limit = maxNesting): void {
  let depth = 0;
  let index = html.indexOf('<');
  while (index >= 0 && index < html.length - 1) {
    const next = html.charCodeAt(index + 1);
    if (next === 33) {
      // <!-- comment --> or <!doctype>
      const end = html.startsWith('<!--', index) ? html.indexOf('-->', index + 4) : html.indexOf('>', index);
      if (end < 0) return;
      index = html.indexOf('<', end);
      continue;
    }
    const closing = next === 47;
    const start = closing ? index + 2 : index + 1;
    let stop = start;
    while (stop < html.length && isNameCharacter(html.charCodeAt(stop))) stop++;
    if (stop === start) {
      index = html.indexOf('<', index + 1);
      continue;
    }
    const name = html.slice(start, stop).toLowerCase();
    const end = html.indexOf('>', stop);
    if (end < 0) return;
    if (closing) {
      if (!unnestedTags.has(name) && depth > 0) depth--;
    } else if (name === 'script' || name === 'style') {
      // Raw text: skip to the end tag, a '<' in a script is not a tag.
      const endTag = name === 'script' ? /<\/script/gi : /<\/style/gi;
      endTag.lastIndex = end;
      const close = endTag.exec(html);
      if (!close) return;
      index = close.index;
      continue;
    } else if (!unnestedTags.has(name) && html.charCodeAt(end - 1) !== 47 && ++depth > limit) {
      throw new HtmlInputError(`HTML nests elements more than ${limit} deep; refusing to parse it`);
    }
    index = html.indexOf('<', end);
  }
}

function isNameCharacter(code: number): boolean {
  return (
    (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 45
  );
}
