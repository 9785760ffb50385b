/**
 * The search service over a data dir bench:quality filled, built as the service builds it
 * (settings' embedders, word-vector expansion, built-in translators): the dev-split benches
 * (rerank-weights, semantic-vectors) replay its rankings.
 */
import { openDatabase } from '../../src/db/database.js';
import { createEmbeddersFromSettings } from '../../src/embedding/embedders.js';
import { loadSharedWordVectors } from '../../src/embedding/word-vectors.js';
import { createQueryExpander } from '../../src/search/query-expansion.js';
import { builtInTranslators } from '../../src/search/query-translation.js';
import { createSearchService } from '../../src/search/search-service.js';
import { loadSettings } from '../../src/settings.js';

export async function openDataDirSearch(dataDir: string) {
  const database = await openDatabase({ dataDir });
  const settings = loadSettings({ WEIR_DATA_DIR: dataDir });
  const search = createSearchService({
    db: database.db,
    embedders: createEmbeddersFromSettings(settings.embedding_models),
    expander: createQueryExpander({ db: database.db, vectors: () => loadSharedWordVectors() }),
    translators: builtInTranslators(database.db),
  });
  return { database, search };
}
