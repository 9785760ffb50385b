/**
 * The words of a markdown segment that keyword search should see. Link and image targets are
 * dropped (a table of contents would otherwise index every page name it links to, and URLs
 * add host and path tokens), and markdown escapes are undone (`pg\_dump` is `pg_dump`). The
 * segment keeps its markdown for display; only the search vector is built from this.
 */

// `](target)` or `](target "title")`, with one level of balanced parentheses in the target.
const linkTarget = /\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+(?:"[^"]*"|'[^']*'))?\)/g;
// `[label]: https://...` reference definitions, and `<https://...>` autolinks.
const referenceDefinition = /^ {0,3}\[[^\]\n]+\]:[ \t]*\S+.*$/gm;
const autolink = /<(?:https?|ftp|mailto):[^>\s]*>/g;
const markdownEscape = /\\([!-/:-@[-`{-~])/g;

export function searchableText(markdown: string): string {
  return markdown
    .replace(linkTarget, ']')
    .replace(referenceDefinition, '')
    .replace(autolink, '')
    .replace(markdownEscape, '$1');
}

/**
 * The heavily weighted field of a segment: its heading path, and the document's title when
 * the path does not already start with it.
 */
export function headingField(headingPath: readonly string[], title: string | undefined): string {
  const headings = headingPath.join(' ');
  const first = headingPath[0]?.trim().toLowerCase() ?? '';
  const cleanTitle = title?.trim() ?? '';
  if (
    cleanTitle === '' ||
    (first !== '' && (first.includes(cleanTitle.toLowerCase()) || cleanTitle.toLowerCase().includes(first)))
  ) {
    return searchableText(headings);
  }
  return searchableText(`${cleanTitle} ${headings}`.trim());
}
