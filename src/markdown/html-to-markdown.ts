/**
 * HTML to markdown: htmlparser2 builds a light DOM (no layout, no scripts), main-content.ts
 * picks the content root, and a compact converter writes CommonMark/GFM: ATX headings,
 * nested lists, links and images, fenced code blocks keeping their language, GFM tables,
 * block quotes. Front matter (title, url, language, description) comes from the head.
 *
 * Hostile input is bounded: the caller caps the size, binary input is refused before
 * parsing, and elements nested deeper than `maxDepth` are flattened to their text by an
 * iterative walk, so no input can exhaust the call stack.
 */
import type { ChildNode, Document, Element } from 'domhandler';
import { parseDocument } from 'htmlparser2';
import { toSearchLanguage } from '../search-index/language.js';
import { looksLikeStorageFormat, rewriteStorageFormat } from '../wiki/storage-format.js';
import { chooseCanonicalUrl } from './canonical-url.js';
import { assertNestingBounded, assertTextual } from './html-input-guards.js';
import { tableGrid } from './html-table.js';
import { findMainContent, isBoilerplate } from './main-content.js';
import {
  type AlternateLink,
  linkHeaderAlternates,
  maxAlternateLinks,
  pageAlternates,
} from './page-alternates.js';

export interface FrontMatter {
  title: string;
  url: string;
  /** ISO 639-1 code (`en`, `no`), or empty when unknown. */
  language: string;
  description: string;
}

export interface ConvertedPage {
  markdown: string;
  frontMatter: FrontMatter;
  /** Declared translations (`<link rel=alternate hreflang>`): code -> absolute URL (page-alternates.ts). */
  alternates?: Record<string, string>;
}

const maxDepth = 200;

export function htmlToMarkdown(
  html: string,
  options: {
    url?: string;
    language?: string;
    /** Hosts besides the fetched page's own whose canonical URLs are taken (canonical-url.ts). */
    canonicalHosts?: readonly string[];
    /** The response's `Link:` header: its hreflang alternates count after the head's (page-alternates.ts). */
    linkHeader?: string;
  } = {},
): ConvertedPage {
  assertTextual(html);
  assertNestingBounded(html);
  // Confluence storage format (a wiki page) is XHTML: self-closing tags and CDATA count.
  const storageFormat = looksLikeStorageFormat(html);
  const document = parseDocument(html, {
    lowerCaseTags: true,
    lowerCaseAttributeNames: true,
    ...(storageFormat ? { recognizeSelfClosing: true, recognizeCDATA: true } : {}),
  });
  if (storageFormat) rewriteStorageFormat(document);
  const head = readHead(document);
  const pageUrl = chooseCanonicalUrl(head.canonical ?? head.ogUrl, options.url, options.canonicalHosts);
  const base = safeUrl(pageUrl);
  const root = findMainContent(document);
  const converter = new Converter(base);
  let markdown = converter.blocks(root.children, 0).join('\n\n').trim();
  if (markdown.length > 0) markdown += '\n';
  const firstHeading = /^#{1,6} (.+)$/m.exec(markdown)?.[1];
  // The declared language only: detection needs the detector's tables (language-detection.ts),
  // which the adapters load once; they replace this when the text says otherwise.
  const declared = toSearchLanguage(options.language ?? head.lang);
  const alternates = pageAlternates(
    [...head.alternates, ...linkHeaderAlternates(options.linkHeader)],
    pageUrl,
    options.canonicalHosts,
  );
  return {
    ...(alternates ? { alternates } : {}),
    markdown,
    frontMatter: {
      title: (head.ogTitle ?? head.title ?? firstHeading ?? '').trim(),
      url: pageUrl ?? '',
      language: (declared ? primaryCode(options.language ?? head.lang) : undefined) ?? '',
      description: (head.description ?? '').trim(),
    },
  };
}

/** `en-US` -> `en`; undefined for an empty value. */
function primaryCode(value: string | undefined): string | undefined {
  const code = value?.trim().toLowerCase().split(/[-_]/)[0];
  return code ? code : undefined;
}

interface HeadFields {
  title?: string;
  ogTitle?: string;
  description?: string;
  canonical?: string;
  ogUrl?: string;
  lang?: string;
  alternates: AlternateLink[];
}

/** Reads title, meta and link fields from the whole document (iteratively: any depth). */
function readHead(document: Document): HeadFields {
  const fields: HeadFields = { alternates: [] };
  const stack: ChildNode[] = [...document.children];
  while (stack.length > 0) {
    const node = stack.pop() as ChildNode;
    if (node.type !== 'tag') continue;
    const attributes = node.attribs;
    switch (node.name) {
      case 'html':
        if (attributes.lang) fields.lang = attributes.lang;
        else if (attributes['xml:lang']) fields.lang = attributes['xml:lang'];
        break;
      case 'title':
        fields.title ??= collapse(textOf(node));
        continue;
      case 'meta': {
        const key = (attributes.property ?? attributes.name ?? '').toLowerCase();
        const content = attributes.content;
        if (content === undefined) continue;
        if (key === 'og:title') fields.ogTitle ??= content;
        else if (key === 'description' || (key === 'og:description' && fields.description === undefined))
          fields.description = content;
        else if (key === 'og:url') fields.ogUrl ??= content;
        continue;
      }
      case 'link': {
        const rel = (attributes.rel ?? '').toLowerCase().split(/\s+/);
        if (rel.includes('canonical') && attributes.href) fields.canonical ??= attributes.href;
        else if (rel.includes('alternate') && attributes.hreflang && attributes.href) {
          if (fields.alternates.length < maxAlternateLinks)
            fields.alternates.push({ hreflang: attributes.hreflang, href: attributes.href });
        }
        continue;
      }
      case 'body':
        // Titles and metas belong in the head; the body may still hold <title> inside an svg.
        if (fields.title !== undefined) continue;
        break;
    }
    for (let index = node.children.length - 1; index >= 0; index--)
      stack.push(node.children[index] as ChildNode);
  }
  return fields;
}

function safeUrl(value: string | undefined): URL | undefined {
  if (!value) return undefined;
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

/** All text under `node`, by an explicit stack (safe at any depth). */
export function textOf(node: ChildNode | Document): string {
  const parts: string[] = [];
  const stack: (ChildNode | Document)[] = [node];
  while (stack.length > 0) {
    const current = stack.pop() as ChildNode | Document;
    if (current.type === 'text') parts.push(current.data);
    else if ('children' in current) {
      if (current.type === 'script' || current.type === 'style') continue;
      for (let index = current.children.length - 1; index >= 0; index--)
        stack.push(current.children[index] as ChildNode);
    }
  }
  return parts.join('');
}

function collapse(text: string): string {
  return text.replace(whitespaceToCollapse, ' ').trim();
}

/**
 * The whitespace runs that are not one space already: replacing each with a space is the
 * same as replacing every run (/\s+/g), but a single space (most of them, between words) is
 * not matched and rewritten, so text without other whitespace comes back as it was, and the
 * rest in about half the time (bench:ingest converts 1,169 pages twice).
 */
const whitespaceToCollapse = /\s{2,}|[^\S ]/g;

/** Stands for a `<br>` until whitespace is collapsed (source newlines are just spaces). */
const lineBreak = '\u0001';

/** Collapsed inline text with `<br>` as markdown hard breaks. */
function paragraph(text: string): string {
  const collapsed = collapse(text);
  // Most paragraphs have no <br>: already the result (trimmed, one line).
  if (!collapsed.includes(lineBreak)) return collapsed;
  return collapsed
    .split(lineBreak)
    .map((line) => line.trim())
    .join('  \n')
    .trim();
}

/** Collapsed inline text on one line (headings, table cells). */
function oneLine(text: string): string {
  return collapse(text.replaceAll(lineBreak, ' '));
}

const blockTags = new Set([
  'address',
  'article',
  'blockquote',
  'body',
  'center',
  'dd',
  'details',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hgroup',
  'hr',
  'li',
  'main',
  'ol',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'ul',
  'header',
]);

const listStart = /^(?:[-*+]|\d+[.)]) /;

const languageClass = /(?:^|\s)(?:language|lang|highlight|brush:?)-?([\w+#.-]+)/i;

class Converter {
  constructor(private readonly base: URL | undefined) {}

  /** Markdown blocks of a list of sibling nodes. */
  blocks(nodes: readonly ChildNode[], depth: number): string[] {
    const out: string[] = [];
    let inline = '';
    const flush = () => {
      const text = paragraph(inline);
      if (text) out.push(escapeBlockStart(text));
      inline = '';
    };
    for (const node of nodes) {
      if (node.type === 'text') {
        inline += node.data;
        continue;
      }
      if (node.type !== 'tag') continue;
      if (isBoilerplate(node)) continue;
      if (!blockTags.has(node.name)) {
        if (node.name === 'br') inline += lineBreak;
        else inline += this.inline(node, depth + 1);
        continue;
      }
      flush();
      const block = depth > maxDepth ? collapse(textOf(node)) : this.block(node, depth + 1);
      if (block) out.push(block);
    }
    flush();
    return out;
  }

  private block(element: Element, depth: number): string {
    switch (element.name) {
      case 'h1':
      case 'h2':
      case 'h3':
      case 'h4':
      case 'h5':
      case 'h6': {
        const text = oneLine(this.inlineChildren(element, depth));
        return text ? `${'#'.repeat(Number(element.name[1]))} ${text}` : '';
      }
      case 'p':
      case 'dt':
      case 'summary':
      case 'figcaption': {
        const text = paragraph(this.inlineChildren(element, depth));
        if (!text) return '';
        return element.name === 'dt' && !text.startsWith('**') ? `**${text}**` : escapeBlockStart(text);
      }
      case 'hr':
        return '---';
      case 'pre':
        return this.code(element);
      case 'ul':
      case 'ol':
        return this.list(element, depth);
      case 'table':
        return this.table(element, depth);
      case 'blockquote':
        return this.blocks(element.children, depth)
          .join('\n\n')
          .split('\n')
          .map((line) => (line ? `> ${line}` : '>'))
          .join('\n');
      default:
        return this.blocks(element.children, depth).join('\n\n');
    }
  }

  private code(pre: Element): string {
    const text = textOf(pre).replace(/^\n/, '').replace(/\s+$/, '');
    if (!text) return '';
    const code = pre.children.find(
      (child): child is Element => child.type === 'tag' && child.name === 'code',
    );
    const classes = `${pre.attribs.class ?? ''} ${code?.attribs.class ?? ''} ${pre.attribs['data-lang'] ?? ''}`;
    const language = pre.attribs['data-lang'] ?? languageClass.exec(classes)?.[1] ?? '';
    const fence = '`'.repeat(Math.max(3, longestBacktickRun(text) + 1));
    return `${fence}${language}\n${text}\n${fence}`;
  }

  private list(list: Element, depth: number): string {
    const ordered = list.name === 'ol';
    let number = Number(list.attribs.start ?? 1) || 1;
    const items: string[] = [];
    for (const child of list.children) {
      if (child.type !== 'tag' || child.name !== 'li') continue;
      const marker = ordered ? `${number++}. ` : '- ';
      // A nested list follows its item's text directly (a tight list); other blocks are paragraphs.
      const body = this.blocks(child.children, depth + 1).reduce(
        (text, block) => (text ? `${text}${listStart.test(block) ? '\n' : '\n\n'}${block}` : block),
        '',
      );
      const indent = ' '.repeat(marker.length);
      const lines = body.split('\n');
      items.push(
        marker +
          lines
            .map((line, index) => (index === 0 || line === '' ? line : indent + line))
            .join('\n')
            .trimEnd(),
      );
    }
    return items.join('\n');
  }

  private table(table: Element, depth: number): string {
    // Spanned cells fill every slot they cover (html-table.ts).
    const { rows, headerRow } = tableGrid(table, (cell) => this.cell(cell, depth));
    if (rows.length === 0) return '';
    const caption = table.children.find(
      (child): child is Element => child.type === 'tag' && child.name === 'caption',
    );
    // A loop, not Math.max(...rows): a spread of 100,000 rows overflows the stack.
    const width = rows.reduce((widest, row) => Math.max(widest, row.length), 0);
    const header = headerRow >= 0 ? rows.splice(headerRow, 1)[0] : rows.shift();
    const line = (cells: readonly string[]) =>
      `| ${Array.from({ length: width }, (_, index) => cells[index] ?? '').join(' | ')} |`;
    const lines = [line(header ?? []), `|${' --- |'.repeat(width)}`, ...rows.map(line)];
    const title = caption ? oneLine(this.inlineChildren(caption, depth)) : '';
    return title ? `${title}\n\n${lines.join('\n')}` : lines.join('\n');
  }

  private cell(cell: Element, depth: number): string {
    const parts = this.blocks(cell.children, depth + 1).map((block) => oneLine(block));
    return parts.join(' ').replace(/\|/g, '\\|').trim();
  }

  private inlineChildren(element: Element, depth: number): string {
    let text = '';
    for (const child of element.children) {
      if (child.type === 'text') text += child.data;
      else if (child.type === 'tag') {
        if (child.name === 'br') text += lineBreak;
        else if (!isBoilerplate(child)) text += this.inline(child, depth + 1);
      }
    }
    return text;
  }

  private inline(element: Element, depth: number): string {
    if (depth > maxDepth) return textOf(element);
    switch (element.name) {
      case 'code':
      case 'kbd':
      case 'samp':
      case 'tt': {
        const text = textOf(element).replace(whitespaceToCollapse, ' ');
        if (!text.trim()) return text;
        const ticks = '`'.repeat(longestBacktickRun(text) + 1);
        const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
        return `${ticks}${pad}${text}${pad}${ticks}`;
      }
      case 'strong':
      case 'b':
        return wrap(this.inlineChildren(element, depth), '**');
      case 'em':
      case 'i':
        return wrap(this.inlineChildren(element, depth), '*');
      case 'a': {
        const text = this.inlineChildren(element, depth);
        if (isPermalinkAnchor(element.attribs.href, text)) return '';
        const href = this.resolve(element.attribs.href);
        if (!href || !text.trim() || href.startsWith('javascript:')) return text;
        return `[${oneLine(text)}](${href})`;
      }
      case 'time': {
        // `<time datetime="2026-03-01"/>` (Confluence's date picker) has no text of its own.
        const text = this.inlineChildren(element, depth);
        return text.trim() ? text : (element.attribs.datetime ?? '');
      }
      case 'img': {
        const src = this.resolve(element.attribs.src);
        const alt = collapse(element.attribs.alt ?? '');
        return src && !src.startsWith('data:') ? `![${alt}](${src})` : alt;
      }
      default:
        return this.inlineChildren(element, depth);
    }
  }

  /** An absolute URL when the page has one (links stay usable out of context). */
  private resolve(href: string | undefined): string | undefined {
    if (!href) return undefined;
    const trimmed = href.trim();
    if (trimmed.startsWith('#') || !this.base) return encodeSpaces(trimmed);
    try {
      return encodeSpaces(new URL(trimmed, this.base).href);
    } catch {
      return encodeSpaces(trimmed);
    }
  }
}

/**
 * A heading's permalink (Sphinx `¶`, MkDocs and others `#`, `§`, `🔗`): a link to an anchor of
 * the page whose text is only such a mark. Dropped, so headings and `heading_path` hold only the
 * heading's words.
 */
function isPermalinkAnchor(href: string | undefined, text: string): boolean {
  return href?.trim().startsWith('#') === true && permalinkMarks.test(text);
}

const permalinkMarks = /^[\s¶§#\u{1F517}]+$/u;

function longestBacktickRun(text: string): number {
  let longest = 0;
  let run = 0;
  for (let index = 0; index < text.length; index++) {
    run = text.charCodeAt(index) === 96 ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  return longest;
}

function encodeSpaces(url: string): string {
  return url.replace(/ /g, '%20').replace(/\)/g, '%29');
}

/** `**text**` around the trimmed text, keeping its outer spaces outside the markers. */
function wrap(text: string, marker: string): string {
  const trimmed = text.trim();
  if (!trimmed) return text;
  const leading = text.startsWith(' ') || text.startsWith('\n') ? ' ' : '';
  const trailing = text.endsWith(' ') || text.endsWith('\n') ? ' ' : '';
  return `${leading}${marker}${trimmed}${marker}${trailing}`;
}

/** A paragraph starting like a heading, list item or quote is escaped so it stays a paragraph. */
function escapeBlockStart(text: string): string {
  return text.replace(/^(#{1,6} |[-+*] |>)/, '\\$1').replace(/^(\d+)([.)] )/, '$1\\$2');
}
