import type { Migration } from './migration.js';

/**
 * Documents by URL: search looks up the reader's copy of a page that only a translation of
 * ranked (src/search/reader-copies.ts) by its URL, the same path under another language folder.
 * Source keys already have their unique index; without this one each such lookup would scan
 * every document.
 */
export const documentUrls: Migration = {
  id: 19,
  name: 'document-urls',
  statements: ['create index knowledge_documents_url on knowledge_documents (url)'],
};
