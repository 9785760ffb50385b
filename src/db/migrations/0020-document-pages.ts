import type { Migration } from './migration.js';

/**
 * Documents by page: each document's language-neutral page key and the copy's language,
 * written at ingestion (search-index/language.ts, pageIdentity: from the page's hreflang
 * alternates, else its language folder, region folders such as `sv-SE/` included). Search
 * finds the reader's copy of a page by key and language (src/search/reader-copies.ts).
 * Rows written before stay null and are read by their language folder, as before.
 */
export const documentPages: Migration = {
  id: 20,
  name: 'document-pages',
  statements: [
    'alter table knowledge_documents add column page_key text, add column page_language text',
    'create index knowledge_documents_page on knowledge_documents (page_key, page_language)',
  ],
};
