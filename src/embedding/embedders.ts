/** Builds the embedder catalogue from the `embedding_models` setting. */
import type { Settings } from '../settings.js';
import { createEmbedderCatalog, type Embedder, type EmbedderCatalog } from './embedder.js';
import { createHashEmbedder } from './hash-embedder.js';
import { createOnnxEmbedder } from './onnx-embedder.js';
import { createOpenAiEmbedder } from './openai-embedder.js';

export type EmbeddingModelSettings = Settings['embedding_models'][number];

export function createEmbeddersFromSettings(models: readonly EmbeddingModelSettings[]): EmbedderCatalog {
  return createEmbedderCatalog(models.map(createEmbedder));
}

function createEmbedder(model: EmbeddingModelSettings): Embedder {
  switch (model.provider) {
    case 'hash':
      return createHashEmbedder({ name: model.name, dimensions: model.dimensions });
    case 'openai':
      if (!model.base_url)
        throw new Error(`embedding model ${model.name}: the openai provider needs base_url`);
      return createOpenAiEmbedder({
        name: model.name,
        baseUrl: model.base_url,
        model: model.model,
        apiKey: model.api_key,
        dimensions: model.dimensions,
        maxBatchSize: model.max_batch_size,
        timeoutMs: model.timeout_ms,
      });
    case 'onnx':
      return createOnnxEmbedder({
        name: model.name,
        modelPath: model.model_path,
        dimensions: model.dimensions,
        maxBatchSize: model.max_batch_size,
      });
    default:
      throw new Error(
        `embedding provider ${model.provider} (model ${model.name}) is not available in this build`,
      );
  }
}
