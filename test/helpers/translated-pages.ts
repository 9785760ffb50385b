/**
 * One page in several languages, served over HTTP on loopback and indexed as ingestion indexes
 * it, for the tests of the reader's language (src/search/language-preference.test.ts,
 * reader-copies.test.ts). A layout says how the site names its copies:
 * - `folder`: a language folder (`/manual/nb/export.html`);
 * - `region`: a folder with a region (`/manual/nb-NO/export.html`);
 * - `hreflang`: no folder at all (`/help/export.html?lang=nb`, English at `/help/export.html`):
 *   only the `<link rel="alternate" hreflang>` links in each page's head say they are copies.
 * Each page is fetched and converted by html_to_markdown's converter (its title and declared
 * alternates), then indexed with the fixture's sections as its segments (so a test knows what
 * BM25 sees), and embedded with the hash embedder when the database has vectors.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Database } from '../../src/db/database.js';
import { createHashEmbedder } from '../../src/embedding/hash-embedder.js';
import { htmlToMarkdown } from '../../src/markdown/html-to-markdown.js';
import { createKnowledgeIndex } from '../../src/search-index/knowledge-index.js';
import type { SearchLanguage } from '../../src/search-index/language.js';

export interface TranslatedCopy {
  /** ISO code of the copy (`nb`, `da`, `sv`, `en`). */
  folder: string;
  language: SearchLanguage;
  title: string;
  /** Heading and text of each segment. */
  sections: [string, string][];
}

export type PageLayout = 'folder' | 'region' | 'hreflang';
export const pageLayouts: readonly PageLayout[] = ['folder', 'region', 'hreflang'];

const regions: Record<string, string> = { nb: 'nb-NO', da: 'da-DK', sv: 'sv-SE', en: 'en-US' };

/** The path of a copy in a layout. */
export function copyPath(layout: PageLayout, page: string, code: string): string {
  if (layout === 'folder') return `/manual/${code}/${page}.html`;
  if (layout === 'region') return `/manual/${regions[code] ?? code}/${page}.html`;
  return code === 'en' ? `/help/${page}.html` : `/help/${page}.html?lang=${code}`;
}

export interface ServedPages {
  /** The URL of the copy in a language (by its code). */
  url(code: string): string;
  close(): Promise<void>;
}

/** Serves each copy's HTML page on 127.0.0.1; heads declare the copies only in the hreflang layout. */
export async function servePages(
  copies: readonly TranslatedCopy[],
  layout: PageLayout,
  page: string,
): Promise<ServedPages> {
  const byPath = new Map(copies.map((copy) => [copyPath(layout, page, copy.folder), copy]));
  const server = http.createServer((request, response) => {
    const copy = byPath.get(request.url ?? '');
    if (!copy) {
      response.writeHead(404).end();
      return;
    }
    const links =
      layout === 'hreflang'
        ? copies
            .map(
              (other) =>
                `<link rel="alternate" hreflang="${other.folder}" href="${copyPath(layout, page, other.folder)}">`,
            )
            .join('')
        : '';
    const body = copy.sections.map(([heading, text]) => `<h2>${heading}</h2><p>${text}</p>`).join('');
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(
      `<!doctype html><html><head><title>${copy.title}</title>${links}</head><body><main><h1>${copy.title}</h1>${body}</main></body></html>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (code) => `${base}${copyPath(layout, page, code)}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Fetches each copy and indexes it, in execution `executionOf(copy)`; with `vectors`, embeds
 * its segments with the hash embedder (model `hash`).
 */
export async function indexServedCopies(
  database: Database,
  copies: readonly TranslatedCopy[],
  served: ServedPages,
  options: { vectors: boolean; executionOf: (copy: TranslatedCopy) => string },
): Promise<void> {
  const index = createKnowledgeIndex(database.db);
  const embedder = createHashEmbedder();
  for (const copy of copies) {
    const url = served.url(copy.folder);
    const response = await fetch(url);
    if (!response.ok) throw new Error(`${url}: ${response.status}`);
    const converted = htmlToMarkdown(await response.text(), { url });
    const executionId = options.executionOf(copy);
    const ids = await index.indexDocuments([
      {
        document: {
          sourceKey: url,
          url,
          title: converted.frontMatter.title,
          language: copy.language,
          executionId,
          ...(converted.alternates ? { alternates: converted.alternates } : {}),
        },
        segments: copy.sections.map(([heading, text], segmentIndex) => ({
          segmentIndex,
          text,
          tokenCount: text.split(' ').length,
          headingPath: [copy.title, heading],
        })),
      },
    ]);
    if (!options.vectors) continue;
    const vectors = await embedder.embed(copy.sections.map(([, text]) => text));
    await index.upsertEmbeddings(
      ids.flat().map((segmentId, position) => ({
        segmentId,
        model: 'hash',
        vector: vectors[position] as Float32Array,
        executionId,
      })),
    );
  }
}
