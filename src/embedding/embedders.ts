/** Builds the embedder catalogue from the `embedding_models` setting. */
import type { Settings } from '../settings.js';
import { createEmbedderCatalog, type Embedder, type EmbedderCatalog } from './embedder.js';
import { createHashEmbedder } from './hash-embedder.js';

export type EmbeddingModelSettings = Settings['embedding_models'][number];

export function createEmbeddersFromSettings(models: readonly EmbeddingModelSettings[]): EmbedderCatalog {
  return createEmbedderCatalog(models.map(createEmbedder));
}

function createEmbedder(model: EmbeddingModelSettings): Embedder {
  switch (model.provider) {
    case 'hash':
      return createHashEmbedder({ name: model.name, dimensions: model.dimensions });
    default:
      throw new Error(
        `embedding provider ${model.provider} (model ${model.name}) is not available in this build`,
      );
  }
}
