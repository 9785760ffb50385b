/**
 * Which stemmers parse a query (see search-service.ts): the filter's language, or the index's
 * dominant language (or every language present when none dominates), plus the query's own
 * language when it is detected with confidence: by ELD's lead alone, or by a smaller lead when
 * most of the query's words are unknown to the index in its other languages (query-vocabulary.ts).
 */
import { type Kysely, sql } from 'kysely';
import type { DatabaseSchema } from '../db/schema.js';
import type { SearchLanguage } from '../search-index/language.js';
import { loadLanguageDetector } from '../search-index/language-detection.js';
import { languageByVocabulary } from './query-vocabulary.js';

const LANGUAGE_CACHE_MS = 30_000;
/** A language holding this share of the segments is the only one a query of unknown language is parsed in. */
export const dominantLanguageShare = 0.8;

export function createQueryLanguages(db: Kysely<DatabaseSchema>) {
  let languageCache: { at: number; languages: Promise<{ language: string; share: number }[]> } | undefined;

  /** Languages of the indexed segments, most segments first, cached briefly. */
  function presentLanguages(): Promise<{ language: string; share: number }[]> {
    if (!languageCache || Date.now() - languageCache.at > LANGUAGE_CACHE_MS) {
      const languages = sql<{ language: string; segments: string }>`
        select language, segments from knowledge_segment_totals where segments > 0 order by segments desc, language`
        .execute(db)
        .then((result) => {
          const total = result.rows.reduce((sum, row) => sum + Number(row.segments), 0);
          return result.rows.map((row) => ({ language: row.language, share: Number(row.segments) / total }));
        });
      languageCache = { at: Date.now(), languages };
      languages.catch(() => {
        languageCache = undefined;
      });
    }
    return languageCache.languages;
  }

  /** Which stemmers parse the query (see the module comment). */
  async function queryLanguagesFor(query: string, filter: SearchLanguage | undefined) {
    const present = await presentLanguages();
    const held = present.map((entry) => entry.language);
    if (filter) return { languages: [filter], queryLanguage: filter, detected: undefined, present: held };
    const dominant =
      present[0] && present[0].share >= dominantLanguageShare ? [present[0].language] : undefined;
    const indexLanguages = dominant ?? present.map((entry) => entry.language);
    const detector = await loadLanguageDetector();
    const detected =
      detector.query(query, indexLanguages) ??
      (await languageByVocabulary(db, detector, query, indexLanguages));
    const languages = [...new Set([...(detected ? [detected] : []), ...indexLanguages])];
    return {
      languages: languages.length > 0 ? languages : ['simple'],
      queryLanguage: detected,
      detected,
      /** Every language the index holds segments in. */
      present: held,
    };
  }

  return queryLanguagesFor;
}
