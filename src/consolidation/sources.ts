/**
 * The sources knowledge consolidation reads: stored objects (a fetched page, a converted
 * document, a wiki page, a rendered routine), identified by where they came from rather than
 * by storage key, because every ingestion run writes its objects under a new execution id.
 * A source's text is markdown: stored markdown as it is (front matter removed), HTML through
 * the page converter, plain text as one section.
 */
import { htmlToMarkdown } from '../markdown/html-to-markdown.js';
import { parseBlocks, plainHeading } from '../markdown/segmenter.js';
import type { ObjectInfo, ObjectStore } from '../storage/object-store.js';
import { isNamingCode } from './word-roles.js';

/** One source as a manifest lists it. */
export interface SourceEntry {
  /** Stable identity across runs: the origin URL or document key, else the storage key. */
  source_id: string;
  key: string;
  content_hash: string;
  title: string | null;
  url: string | null;
  created_at: string;
}

export interface LoadedSource {
  source_id: string;
  key: string;
  title: string;
  url: string | null;
  markdown: string;
  sections: Section[];
}

/** Text under one heading: the heading path and its paragraphs (code and tables left out). */
export interface Section {
  heading_path: string[];
  paragraphs: string[];
  /**
   * The paragraphs as prose for concept detection: inline code that names nothing (a field
   * name, a path, a payload shape) replaced by a phrase break (see proseText). One per paragraph.
   */
  prose?: string[];
}

const textual = /^(text\/(markdown|plain|html|x-markdown)|application\/xhtml\+xml)/;
const textualExtension = /\.(md|markdown|txt|html?|xhtml)$/i;

/** Whether consolidation can read an object of this key and content type. */
export function isReadableSource(key: string, contentType: string): boolean {
  return textual.test(contentType) || textualExtension.test(key);
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.length > 0 ? value : null;
}

/** The manifest entry of a stored object. */
export function sourceEntryOf(
  info: Pick<ObjectInfo, 'key' | 'sha256' | 'created_at' | 'metadata'>,
): SourceEntry {
  const metadata = info.metadata;
  const url = text(metadata.url);
  return {
    source_id: text(metadata.source_key) ?? url ?? info.key,
    key: info.key,
    content_hash: info.sha256,
    title: text(metadata.title),
    url,
    created_at: info.created_at,
  };
}

/**
 * Keeps the newest object of each source (a source ingested by several runs), ordered by
 * source id so every later step sees the sources in one order.
 */
export function newestPerSource(entries: readonly SourceEntry[]): SourceEntry[] {
  const newest = new Map<string, SourceEntry>();
  for (const entry of entries) {
    const seen = newest.get(entry.source_id);
    if (
      !seen ||
      entry.created_at > seen.created_at ||
      (entry.created_at === seen.created_at && entry.key > seen.key)
    )
      newest.set(entry.source_id, entry);
  }
  return [...newest.values()].sort((a, b) => a.source_id.localeCompare(b.source_id));
}

/** Reads and parses one source. `maxBytes` bounds what one object may cost. */
export async function loadSource(
  storage: ObjectStore,
  entry: Pick<SourceEntry, 'source_id' | 'key' | 'title' | 'url'>,
  maxBytes = 5_000_000,
): Promise<LoadedSource> {
  const info = await storage.stat(entry.key);
  if (!info) throw new SourceMissing(entry.key);
  if (info.size > maxBytes)
    throw new Error(`source ${entry.key} is ${info.size} bytes, over the ${maxBytes} limit`);
  const body = (await storage.get(entry.key)).toString('utf8');
  const markdown = markdownOf(body, entry.key, info.content_type, entry.url ?? undefined);
  const sections = sectionsOf(markdown);
  const title = entry.title ?? firstHeading(sections) ?? lastPathPart(entry.source_id);
  return { source_id: entry.source_id, key: entry.key, title, url: entry.url, markdown, sections };
}

export class SourceMissing extends Error {
  override name = 'SourceMissing';
  constructor(readonly key: string) {
    super(`source object ${key} no longer exists`);
  }
}

function markdownOf(body: string, key: string, contentType: string, url: string | undefined): string {
  if (/html/.test(contentType) || /\.x?html?$/i.test(key)) {
    const converted = htmlToMarkdown(body, url ? { url } : {});
    const title = converted.frontMatter.title;
    return title && !/^#\s/m.test(converted.markdown.slice(0, 400))
      ? `# ${title}\n\n${converted.markdown}`
      : converted.markdown;
  }
  return body.replace(/^---\n[\s\S]*?\n---\n/, '');
}

/** Sections by heading; a heading starts a new section (headings are hard boundaries). */
export function sectionsOf(markdown: string): Section[] {
  const sections: Section[] = [];
  const path: { level: number; text: string }[] = [];
  let current: Section = { heading_path: [], paragraphs: [], prose: [] };
  for (const block of parseBlocks(markdown)) {
    if (block.kind === 'heading') {
      if (current.paragraphs.length > 0 || current.heading_path.length > 0) sections.push(current);
      const level = block.level ?? 1;
      while (path.length > 0 && (path[path.length - 1] as { level: number }).level >= level) path.pop();
      path.push({ level, text: cleanHeading(plainHeading(block.text)) });
      current = { heading_path: path.map((part) => part.text), paragraphs: [], prose: [] };
    } else if (block.kind === 'text') {
      const paragraph = plainText(block.text);
      if (paragraph.length > 0) {
        current.paragraphs.push(paragraph);
        current.prose?.push(proseText(block.text));
      }
    }
  }
  if (current.paragraphs.length > 0 || current.heading_path.length > 0) sections.push(current);
  return sections;
}

/** "24.1. Routine Vacuuming" -> "Routine Vacuuming"; "Chapter 11. Indexes" -> "Indexes". */
export function cleanHeading(heading: string): string {
  return heading
    .replace(/^(chapter|part|appendix|kapittel|del|vedlegg)\s+[\dIVXLC]+[.:]?\s+/i, '')
    .replace(/^([A-Z]\.)?(\d+\.)+\d*\.?\s+/, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Inline markdown removed: links keep their text, images go, emphasis and code marks go. */
export function plainText(markdown: string): string {
  return markdown
    .replace(/!\[[^\]]*\]\([^)]*\)/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/^\s{0,3}(?:[-*+]|\d+[.)])\s+/gm, '')
    .replace(/^\s{0,3}>\s?/gm, '')
    .replace(/(\*{1,3}|_{2,3})(\S[^*_]*?\S|\S)\1/g, '$2')
    .replace(/`+([^`]*)`+/g, '$1')
    .replace(/\\([!-/:-@[-`{-~])/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * A paragraph's plain text with the inline code that names nothing (`title`, `key`,
 * `src/storage/fs.ts`, `{markdown, front_matter}`) replaced by ` | `, which ends a phrase: the
 * words inside such code are no prose, and on Weir's own docs they became concepts ("src",
 * "title", "key", "batch"). Code that names something (`pg_dump`, `s3rver`) stays a word.
 */
export function proseText(markdown: string): string {
  return plainText(
    markdown.replace(/(`+)([^`]+?)\1/g, (_span, _ticks, code: string) => (isNamingCode(code) ? code : ' | ')),
  );
}

function firstHeading(sections: readonly Section[]): string | undefined {
  for (const section of sections) if (section.heading_path.length > 0) return section.heading_path[0];
  return undefined;
}

function lastPathPart(id: string): string {
  const part = id.replace(/[?#].*$/, '').replace(/\/+$/, '');
  return decodeURIComponent(part.slice(part.lastIndexOf('/') + 1)).replace(/\.[a-z]+$/i, '') || id;
}
