/**
 * A query's rewrites before ranking: word-vector expansions (English), glossary translations
 * (a question in a language the index does not hold) and, for a Norwegian question over
 * Norwegian pages, the other written standard's spellings (norwegian-spellings.ts). Each is
 * reported in the response's `parameters`.
 */
import type { createNorwegianSpellings } from './norwegian-spellings.js';
import type { QueryExpander } from './query-expansion.js';
import type { createQueryLanguages } from './query-languages.js';
import type { QueryTranslator } from './query-translation.js';
import { expandsQuery, translatorFor } from './search-request.js';
import type { SearchRequest } from './search-service.js';

/** The query's word-vector expansions and glossary translations, each reported in `parameters`. */
export async function rewrite(
  rewriters: {
    expander?: QueryExpander | undefined;
    translators?: readonly QueryTranslator[] | undefined;
    spellings: ReturnType<typeof createNorwegianSpellings>;
  },
  query: string,
  request: SearchRequest,
  keywordLanguages: Awaited<ReturnType<ReturnType<typeof createQueryLanguages>>> | undefined,
  parameters: Record<string, unknown>,
) {
  const match = request.match ?? 'any';
  const { expander, translators = [] } = rewriters;
  const expansions =
    expander && expandsQuery(keywordLanguages, match, request) ? await expander.expand(query) : [];
  const translator = translatorFor(translators, keywordLanguages, match, request);
  const translated = translator ? await translator.translate(query) : undefined;
  // A Norwegian question over Norwegian pages, also in the other written standard's spelling.
  const respells =
    match === 'any' &&
    request.translate !== false &&
    keywordLanguages?.queryLanguage === 'norwegian' &&
    keywordLanguages.present.includes('norwegian');
  const spellings = respells ? await rewriters.spellings.variants(query) : [];
  if (keywordLanguages) {
    parameters.query_expansions = expansions.map(({ from, lexeme, similarity }) => ({
      from,
      lexeme,
      similarity,
    }));
    parameters.query_translations = (translated?.translations ?? []).map(({ from, lexeme, weight }) => ({
      from,
      lexeme,
      weight,
    }));
    if (respells) parameters.query_spellings = spellings;
  }
  return { expansions, translated, spellings };
}
