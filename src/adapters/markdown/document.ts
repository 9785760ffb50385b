/**
 * The document identity that travels in envelope metadata (`metadata.document`): set by
 * html_to_markdown (and document_converter), read by every later Markdown and Embedding stage.
 */
import { createHash } from 'node:crypto';
import { maxAlternates } from '../../markdown/page-alternates.js';
import type { DocumentInput } from '../../search-index/knowledge-index.js';
import { toSearchLanguage } from '../../search-index/language.js';
import type { AdapterContext } from '../adapter.js';

export interface DocumentMetadata {
  /** The page URL, or the object key for content without one. */
  source_key: string;
  url: string | null;
  title: string | null;
  /** A search language name (`english`, `norwegian`, `simple`). */
  language: string;
  /**
   * Key of the stored object the document was read from (document_converter, html_to_markdown
   * after storage_retriever), replaced by the canonical markdown object once
   * markdown_storage_writer stored it. Citations of a source with no http(s) URL link to it.
   */
  storage_key?: string;
  /**
   * The page's declared translations (html_to_markdown: `<link rel=alternate hreflang>`), code
   * -> absolute URL; the knowledge index keys the page's copies by them (pageIdentity).
   */
  alternates?: Record<string, string>;
}

/** `metadata.document` of the message; a clear failure when an earlier stage did not set it. */
export function documentOf(context: AdapterContext, stage: string): DocumentMetadata {
  const document = context.metadata.document as Partial<DocumentMetadata> | undefined;
  if (!document || typeof document.source_key !== 'string' || document.source_key === '') {
    throw new Error(
      `${stage} needs metadata.document with a source_key: put html_to_markdown (or document_converter) earlier in the route`,
    );
  }
  return {
    source_key: document.source_key,
    url: typeof document.url === 'string' ? document.url : null,
    title: typeof document.title === 'string' ? document.title : null,
    language: typeof document.language === 'string' ? document.language : 'simple',
    ...(typeof document.storage_key === 'string' ? { storage_key: document.storage_key } : {}),
    ...alternatesOf(document.alternates),
  };
}

/** Alternates as metadata carried them (strings only, at most maxAlternates); none when absent or malformed. */
function alternatesOf(value: unknown): { alternates?: Record<string, string> } {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return {};
  const entries = Object.entries(value)
    .filter((entry): entry is [string, string] => typeof entry[1] === 'string')
    .slice(0, maxAlternates);
  return entries.length > 0 ? { alternates: Object.fromEntries(entries) } : {};
}

/** The knowledge-index form of a document. */
export function documentInput(
  document: DocumentMetadata,
  context: AdapterContext,
  extra: { storageKey?: string; frontMatter?: Record<string, unknown> } = {},
): DocumentInput {
  return {
    sourceKey: document.source_key,
    url: document.url ?? undefined,
    title: document.title ?? undefined,
    language: toSearchLanguage(document.language) ?? 'simple',
    storageKey: extra.storageKey ?? document.storage_key,
    ...(document.alternates ? { alternates: document.alternates } : {}),
    ...(extra.frontMatter ? { frontMatter: extra.frontMatter } : {}),
    executionId: context.executionId,
    routeId: context.routeId,
  };
}

/** A short stable file-name stem for a document (its source key may be any URL). */
export function documentStem(sourceKey: string): string {
  return createHash('sha256').update(sourceKey).digest('hex').slice(0, 24);
}
