/**
 * Reading the small, regular XML parts of Office Open XML packages (slides, sheets, core
 * properties) with bounded regular expressions: no DTDs, no entity expansion beyond the five
 * predefined entities and character references, and the input is already size-capped by the
 * ZIP reader. Enough to pull text out; not a general XML parser.
 */

/** The text of every `<tag>...</tag>` (or self-closed) element of `xml`, in order. */
export function elements(xml: string, tag: string): string[] {
  const pattern = new RegExp(`<${tag}(?:\\s[^>]*)?(?:/>|>([\\s\\S]*?)</${tag}>)`, 'g');
  return [...xml.matchAll(pattern)].map((match) => match[0]);
}

/** The inner XML of the first `<tag>` element, or ''. */
export function inner(xml: string, tag: string): string {
  const match = new RegExp(`<${tag}(?:\\s[^>]*)?>([\\s\\S]*?)</${tag}>`).exec(xml);
  return match?.[1] ?? '';
}

/** An attribute of the first `<tag ...>` start tag in `xml`. */
export function attribute(xml: string, tag: string, name: string): string | undefined {
  const start = new RegExp(`<${tag}(?:\\s[^>]*)?/?>`).exec(xml)?.[0];
  if (!start) return undefined;
  const value = new RegExp(`\\s${name}="([^"]*)"`).exec(start)?.[1];
  return value === undefined ? undefined : decodeXmlText(value);
}

/** Concatenated, decoded text of every `<tag>text</tag>` in `xml` (for `a:t`, `t`). */
export function textOf(xml: string, tag: string): string {
  const pattern = new RegExp(`<${tag}(?:\\s[^>]*)?>([^<]*)</${tag}>`, 'g');
  return [...xml.matchAll(pattern)].map((match) => decodeXmlText(match[1] ?? '')).join('');
}

export function decodeXmlText(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (_, entity: string) => {
    const lowered = entity.toLowerCase();
    if (lowered.startsWith('#x')) return safeCodePoint(Number.parseInt(lowered.slice(2), 16));
    if (lowered.startsWith('#')) return safeCodePoint(Number.parseInt(lowered.slice(1), 10));
    return ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" } as Record<string, string>)[lowered] ?? '';
  });
}

function safeCodePoint(code: number): string {
  return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '';
}

/** Dublin Core fields of docProps/core.xml. */
export function coreProperties(xml: string): { title: string; language: string; description: string } {
  const field = (name: string) => decodeXmlText(inner(xml, `dc:${name}`).slice(0, 2000)).trim();
  return {
    title: field('title'),
    language: field('language'),
    description: field('description') || field('subject'),
  };
}

/**
 * Targets of a package part's relationships file, by relationship id, resolved against the
 * folder of the part (`ppt/_rels/presentation.xml.rels` + `slides/slide1.xml` ->
 * `ppt/slides/slide1.xml`).
 */
export function relationshipTargets(relsXml: string, partFolder: string): Map<string, string> {
  const targets = new Map<string, string>();
  for (const element of elements(relsXml, 'Relationship')) {
    const id = attribute(element, 'Relationship', 'Id');
    const target = attribute(element, 'Relationship', 'Target');
    if (!id || !target) continue;
    targets.set(
      id,
      target.startsWith('/') ? target.slice(1) : `${partFolder}/${target}`.replace(/[^/]+\/\.\.\//g, ''),
    );
  }
  return targets;
}

/** Markdown-safe table cell text. */
export function cell(text: string): string {
  return text.replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|');
}
