/**
 * The reader's copy of a page, fetched when only its translations ranked. language-preference.ts
 * shows a page once, in the reader's copy, but only chooses among the candidates: when the
 * keyword ranking's depth held the Danish copy of a page and not the Norwegian one, a Norwegian
 * reader got the Danish page. Here, before that choice, each page among the first `limit`
 * shown that is a copy of a page (search-index/language.ts, copyOf: by its hreflang set or its
 * language folder) and has no copy in the reader's language among the candidates is looked up:
 * by the page key and language ingestion stored (so `sv-SE/` and hreflang-only copies are
 * found), and for copies ingested before the key was stored, under the reader's folders
 * (twinAddresses: `/manual/da/a.html` -> `/manual/nb/`, `/manual/nn/`, `/manual/no/a.html`).
 * A copy found either way joins the candidates with its best segment for the query (BM25F
 * over that document's segments only, the same score on the SQL path and from memory), or its
 * first segment when none holds a query word; the preference
 * then gives it the page's place and moves the translations below every other result.
 *
 * Only when the reader's language is known: the request's `language`, or the question's
 * language detected with confidence (query-languages.ts, ELD's margin or the index's
 * vocabulary) when the ranking agrees with it (rankingAgrees). A guessed language would swap a
 * right page for a wrong-language one.
 *
 * A fetched segment was in no ranking: its components have no rank, and it takes the score of
 * the copy whose place it takes (chat's `min_score` then treats the page as before).
 */
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../db/schema.js';
import { copyOf, type SearchLanguage, toSearchLanguage, twinAddresses } from '../search-index/language.js';
import type { KeywordMemoryIndex } from './keyword-memory-index.js';
import {
  type AddressedSegment,
  addressedSegmentsSql,
  type KeywordFilters,
  type KeywordQuery,
} from './keyword-sql.js';
import type { SearchRow } from './search-sql.js';

export interface ReaderCopyOptions {
  db: Kysely<DatabaseSchema>;
  /** The in-memory index (PGlite), which answers without a statement once filled; else SQL. */
  index: KeywordMemoryIndex | undefined;
  /** The reader's language (a search language or ISO code); undefined: nothing is fetched. */
  language: string | undefined;
  /**
   * True when `language` is the question's detected language, not the request's: then a copy
   * is fetched only when the ranking agrees (rankingAgrees).
   */
  detected?: boolean;
  /** Pages shown: only the first `limit` distinct pages of the ranking are looked at. */
  limit: number;
  /** The keyword query (with its expansions) that picks a fetched document's best segment; absent: its first. */
  query: KeywordQuery | undefined;
  filters: KeywordFilters;
}

/**
 * The rows with, appended, one segment of each reader's copy found for a page that only
 * translations hold among the first `limit` pages; `fetched` counts them.
 */
export async function withReaderCopies(
  rows: SearchRow[],
  options: ReaderCopyOptions,
): Promise<{ rows: SearchRow[]; fetched: number }> {
  const language = toSearchLanguage(options.language);
  if (!language || rows.length === 0) return { rows, fetched: 0 };
  if (options.detected && !rankingAgrees(rows, language, options.limit)) return { rows, fetched: 0 };
  const missing = pagesWithoutReaderCopy(rows, language, options.limit);
  if (missing.size === 0) return { rows, fetched: 0 };
  // By the stored page key (hreflang sets, any language folder, regions included); and, for
  // copies ingested before keys were stored, by the twin addresses under the reader's folders.
  const addresses = [...missing.values()].flatMap((page) => twinAddresses(page.address, language));
  const pages = { keys: [...missing.keys()], language };
  const segments =
    (await options.index?.addressed(options.query, addresses, options.filters, pages)) ??
    (await addressedSegmentsSql(options.query, addresses, options.filters, pages).execute(options.db)).rows;
  const fetched: SearchRow[] = [];
  for (const [page, segment] of bestSegmentPerPage(segments, language)) {
    const shown = missing.get(page);
    if (!shown) continue;
    const { raw: _, ...fields } = segment;
    fetched.push({
      ...fields,
      keyword_rank: null,
      keyword_raw: null,
      vector_rank: null,
      vector_raw: null,
      ...('lsa_rank' in shown.row ? { lsa_rank: null, lsa_raw: null } : {}),
      score: shown.row.score,
      candidates: shown.row.candidates,
    });
  }
  return { rows: fetched.length > 0 ? [...rows, ...fetched] : rows, fetched: fetched.length };
}

/**
 * Among the first `limit` distinct pages of the ranking (a page being a document that is no
 * copy, or every copy of one: copyOf), those that are copies and have no copy in `language`
 * anywhere among the rows: by page, its first row and that row's address.
 */
function pagesWithoutReaderCopy(
  rows: readonly SearchRow[],
  language: SearchLanguage,
  limit: number,
): Map<string, { row: SearchRow; address: string }> {
  const shown = new Map<string, { row: SearchRow; address: string }>();
  const read = new Set<string>();
  const pages = new Set<string>();
  for (const row of rows) {
    const address = row.url ?? row.source_key;
    const copy = copyOf(row);
    const page = copy?.page ?? address.split('#')[0] ?? '';
    if (copy?.language === language) read.add(page);
    if (pages.size >= limit && !pages.has(page)) continue;
    pages.add(page);
    if (copy && !shown.has(page)) shown.set(page, { row, address });
  }
  for (const page of read) shown.delete(page);
  return shown;
}

/**
 * Whether the ranking agrees with a detected language: it disagrees when, among the first
 * `limit` pages that are copies (copyOf), another language holds more of them than `language`
 * does, and at least two. A short Norwegian question of names and terms ("histogramdialog
 * median standardavvik", GIMP dev g057) was detected as English while mostly the Norwegian
 * copies ranked; fetching the English copies put them first. A single translation ranked alone
 * (the case this module is for) is no such evidence.
 */
export function rankingAgrees(rows: readonly SearchRow[], language: SearchLanguage, limit: number): boolean {
  const counts = new Map<string, number>();
  const pages = new Set<string>();
  for (const row of rows) {
    if (pages.size >= limit) break;
    const copy = copyOf(row);
    if (!copy || pages.has(copy.page)) continue;
    pages.add(copy.page);
    counts.set(copy.language, (counts.get(copy.language) ?? 0) + 1);
  }
  const own = counts.get(language) ?? 0;
  return [...counts.values()].every((count) => count <= own || count < 2);
}

/**
 * Each page's fetched segment: of the copies found for it (Norwegian has three folders), the
 * segment with the highest score, ties to the lower segment index, then the earlier document
 * id; with no query word anywhere, so the first segment.
 */
function bestSegmentPerPage(
  segments: readonly AddressedSegment[],
  language: SearchLanguage,
): Map<string, AddressedSegment> {
  const best = new Map<string, AddressedSegment>();
  for (const segment of segments) {
    const copy = copyOf(segment);
    if (copy?.language !== language) continue;
    const held = best.get(copy.page);
    const raw = Number(segment.raw);
    if (
      !held ||
      raw > Number(held.raw) ||
      (raw === Number(held.raw) &&
        (Number(segment.segment_index) < Number(held.segment_index) ||
          (Number(segment.segment_index) === Number(held.segment_index) &&
            segment.document_id < held.document_id)))
    ) {
      best.set(copy.page, segment);
    }
  }
  return best;
}
