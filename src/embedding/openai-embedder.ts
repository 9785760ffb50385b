/**
 * The `openai` provider: any OpenAI-compatible `POST {base_url}/embeddings` (OpenAI, Azure
 * OpenAI behind a gateway, vLLM, Ollama, LocalAI, text-embeddings-inference). Texts are sent
 * in batches of `maxBatchSize`; 429 and 5xx answers are retried with the server's
 * Retry-After (capped) or exponential backoff; every answer is checked (one vector per
 * input, the configured dimensions, finite numbers) before it reaches the index. Requests go
 * through the one outbound client (src/http/outbound.ts) under the model endpoint policy
 * (egress-policy.ts `modelEndpointPolicy`); a redirect is not followed, its 3xx is a failure.
 */
import { type EgressPolicy, modelEndpointPolicy } from '../http/egress-policy.js';
import { EgressRefused, type OutboundResponse, outboundRequest } from '../http/outbound.js';
import { type Embedder, normalize } from './embedder.js';

export interface OpenAiEmbedderOptions {
  name: string;
  baseUrl: string;
  /** Provider-side model name; defaults to `name`. */
  model?: string | undefined;
  apiKey?: string | undefined;
  dimensions: number;
  maxBatchSize?: number | undefined;
  timeoutMs?: number | undefined;
  /** Attempts after the first, for 429, 5xx and network errors. */
  maxRetries?: number | undefined;
  /** Longest wait honoured from Retry-After, and the backoff ceiling. */
  maxRetryDelayMs?: number | undefined;
  /** Base of the exponential backoff when the server gives no Retry-After. */
  retryDelayMs?: number | undefined;
  /** Where the endpoint may be; default modelEndpointPolicy(). */
  egress?: EgressPolicy | undefined;
}

export class EmbeddingProviderError extends Error {
  override name = 'EmbeddingProviderError';
}

export function createOpenAiEmbedder(options: OpenAiEmbedderOptions): Embedder {
  if (!options.baseUrl)
    throw new Error(`embedding model ${options.name}: the openai provider needs base_url`);
  const endpoint = `${options.baseUrl.replace(/\/+$/, '')}/embeddings`;
  const maxBatchSize = options.maxBatchSize ?? 96;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxRetries = options.maxRetries ?? 3;
  const maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
  const retryDelayMs = options.retryDelayMs ?? 500;
  const model = options.model ?? options.name;
  const egress = options.egress ?? modelEndpointPolicy();

  async function request(texts: readonly string[], signal: AbortSignal | undefined): Promise<Float32Array[]> {
    for (let attempt = 0; ; attempt++) {
      const signals = [AbortSignal.timeout(timeoutMs), ...(signal ? [signal] : [])];
      let response: OutboundResponse;
      try {
        response = await outboundRequest({
          url: endpoint,
          egress,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
          },
          body: JSON.stringify({ model, input: texts, encoding_format: 'float' }),
          signal: AbortSignal.any(signals),
        });
      } catch (error) {
        if (signal?.aborted) throw error;
        if (error instanceof EgressRefused)
          throw new EmbeddingProviderError(`embedding model ${options.name}: ${error.message}`);
        if (attempt >= maxRetries) {
          throw new EmbeddingProviderError(
            `embedding model ${options.name}: ${endpoint} did not answer (${(error as Error).message})`,
          );
        }
        await sleep(Math.min(maxRetryDelayMs, retryDelayMs * 2 ** attempt), signal);
        continue;
      }
      if (response.ok) return parseAnswer(await response.text(), texts.length);
      const detail = (await response.text().catch(() => '')).slice(0, 300);
      const retryable = response.status === 429 || response.status >= 500;
      if (!retryable || attempt >= maxRetries) {
        throw new EmbeddingProviderError(
          `embedding model ${options.name}: ${endpoint} answered ${response.status}${detail ? `: ${detail}` : ''}`,
        );
      }
      const delay = retryAfterMs(response.headers.get('retry-after')) ?? retryDelayMs * 2 ** attempt;
      await sleep(Math.min(maxRetryDelayMs, delay), signal);
    }
  }

  function parseAnswer(text: string, expected: number): Float32Array[] {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new EmbeddingProviderError(`embedding model ${options.name}: the answer is not JSON`);
    }
    const data = (body as { data?: unknown }).data;
    if (!Array.isArray(data) || data.length !== expected) {
      throw new EmbeddingProviderError(
        `embedding model ${options.name}: expected ${expected} embeddings in data, got ${Array.isArray(data) ? data.length : 'none'}`,
      );
    }
    const vectors = new Array<Float32Array>(expected);
    for (const [position, item] of data.entries()) {
      const { embedding, index } = item as { embedding?: unknown; index?: unknown };
      const slot = typeof index === 'number' ? index : position;
      if (!Number.isInteger(slot) || slot < 0 || slot >= expected || vectors[slot]) {
        throw new EmbeddingProviderError(
          `embedding model ${options.name}: data[${position}] has a bad index`,
        );
      }
      if (
        !Array.isArray(embedding) ||
        !embedding.every((value) => typeof value === 'number' && Number.isFinite(value))
      ) {
        throw new EmbeddingProviderError(
          `embedding model ${options.name}: data[${position}].embedding is not an array of numbers (base64 answers are not requested)`,
        );
      }
      if (embedding.length !== options.dimensions) {
        throw new EmbeddingProviderError(
          `embedding model ${options.name}: the provider returned ${embedding.length} dimensions, the setting says ${options.dimensions}`,
        );
      }
      vectors[slot] = normalize(Float32Array.from(embedding as number[]));
    }
    return vectors;
  }

  return {
    name: options.name,
    provider: 'openai',
    dimensions: options.dimensions,
    maxBatchSize,
    async embed(texts, signal) {
      const vectors: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += maxBatchSize) {
        vectors.push(...(await request(texts.slice(start, start + maxBatchSize), signal)));
      }
      return vectors;
    },
  };
}

/** Milliseconds of a Retry-After header (seconds or an HTTP date); undefined when absent or bad. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
