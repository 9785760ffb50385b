/**
 * The embedder port: texts in, one unit-length vector per text out. Providers (the offline
 * `hash`, an OpenAI-compatible HTTP API, a local ONNX model) are built from the
 * `embedding_models` setting; ingestion (embedding_generator) and search share one catalogue,
 * so a query is always embedded by the same model as the segments it is compared with.
 */
export interface Embedder {
  /** The model name used in pipeline configs, the index and search requests. */
  readonly name: string;
  readonly provider: string;
  readonly dimensions: number;
  /** Largest number of texts the provider takes in one call. */
  readonly maxBatchSize: number;
  /**
   * Default weight of this model's ranking in RRF search (1 when absent). A lexical model
   * repeats the keyword ranking's evidence, so it declares less.
   */
  readonly rrfWeight?: number;
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

export interface EmbedderCatalog {
  /** Names of every configured model, the default first. */
  readonly names: readonly string[];
  readonly defaultModel: string;
  /** Undefined when no model has that name. */
  get(name: string): Embedder | undefined;
}

export function createEmbedderCatalog(embedders: readonly Embedder[]): EmbedderCatalog {
  const byName = new Map(embedders.map((embedder) => [embedder.name, embedder] as const));
  const names = embedders.map((embedder) => embedder.name);
  return {
    names,
    defaultModel: names[0] ?? 'hash',
    get: (name) => byName.get(name),
  };
}

/** Scales `vector` in place to length 1 (a zero vector stays zero). */
export function normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const value of vector) sum += value * value;
  if (sum === 0) return vector;
  const scale = 1 / Math.sqrt(sum);
  for (let index = 0; index < vector.length; index++) vector[index] = (vector[index] as number) * scale;
  return vector;
}
