import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddingsServer, startEmbeddingsServer } from '../../test/helpers/embeddings-server.js';
import { createEmbeddersFromSettings } from './embedders.js';
import { hashEmbedding } from './hash-embedder.js';
import { createOpenAiEmbedder, retryAfterMs } from './openai-embedder.js';

describe('openai embedder against a local OpenAI-compatible server', () => {
  let server: EmbeddingsServer;
  beforeAll(async () => {
    server = await startEmbeddingsServer({ dimensions: 16, apiKey: 'sk-test' });
  });
  afterAll(async () => {
    await server.close();
  });

  const embedder = () =>
    createOpenAiEmbedder({
      name: 'small',
      model: 'text-embedding-3-small',
      baseUrl: server.baseUrl,
      apiKey: 'sk-test',
      dimensions: 16,
      maxBatchSize: 2,
      retryDelayMs: 10,
    });

  it('embeds in batches of maxBatchSize with the api key, in input order', async () => {
    const before = server.requests.length;
    const texts = ['vacuum', 'analyze', 'reindex', 'cluster', 'checkpoint'];
    const vectors = await embedder().embed(texts);
    const sent = server.requests.slice(before);
    expect(sent.map((request) => request.input)).toEqual([
      ['vacuum', 'analyze'],
      ['reindex', 'cluster'],
      ['checkpoint'],
    ]);
    expect(
      sent.every(
        (request) => request.authorization === 'Bearer sk-test' && request.model === 'text-embedding-3-small',
      ),
    ).toBe(true);
    expect(vectors.map((vector) => Array.from(vector))).toEqual(
      texts.map((text) => Array.from(hashEmbedding(text, 16))),
    );
  });

  it('retries a 429 after its Retry-After, and a 500', async () => {
    server.fail({ kind: 'status', status: 429, retryAfter: '1' });
    server.fail({ kind: 'status', status: 503 });
    const before = server.requests.length;
    const started = Date.now();
    const [vector] = await embedder().embed(['vacuum']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(server.requests.length - before).toBe(3);
    expect(vector).toHaveLength(16);
  });

  it('fails clearly on a malformed answer, wrong dimensions, a wrong count or a bad key', async () => {
    server.fail({ kind: 'malformed' });
    await expect(embedder().embed(['a'])).rejects.toThrow(/small: the answer is not JSON/);
    server.fail({ kind: 'wrong-dimensions' });
    await expect(embedder().embed(['a'])).rejects.toThrow(/returned 17 dimensions, the setting says 16/);
    server.fail({ kind: 'wrong-count' });
    await expect(embedder().embed(['a', 'b'])).rejects.toThrow(/expected 2 embeddings in data, got 1/);
    const wrongKey = createOpenAiEmbedder({
      name: 'small',
      baseUrl: server.baseUrl,
      apiKey: 'nope',
      dimensions: 16,
    });
    await expect(wrongKey.embed(['a'])).rejects.toThrow(/answered 401: .*Incorrect API key/);
  });

  it('gives up after the retries with the last status', async () => {
    for (let index = 0; index < 3; index++) server.fail({ kind: 'status', status: 500 });
    const once = createOpenAiEmbedder({
      name: 'small',
      baseUrl: server.baseUrl,
      apiKey: 'sk-test',
      dimensions: 16,
      maxRetries: 2,
      retryDelayMs: 5,
    });
    await expect(once.embed(['a'])).rejects.toThrow(/answered 500/);
  });

  it('times out a server that does not answer and reports an unreachable one', async () => {
    const closed = createOpenAiEmbedder({
      name: 'gone',
      baseUrl: 'http://127.0.0.1:9/v1',
      dimensions: 4,
      maxRetries: 1,
      retryDelayMs: 5,
      timeoutMs: 500,
    });
    await expect(closed.embed(['a'])).rejects.toThrow(
      /gone: http:\/\/127.0.0.1:9\/v1\/embeddings did not answer/,
    );
  });

  it('is built from the embedding_models setting; an onnx model_path that is missing fails at start-up', () => {
    const catalog = createEmbeddersFromSettings([
      { name: 'hash', provider: 'hash', dimensions: 8 },
      {
        name: 'remote',
        provider: 'openai',
        dimensions: 16,
        base_url: server.baseUrl,
        api_key: 'sk-test',
        max_batch_size: 4,
      },
    ]);
    expect(catalog.get('remote')?.maxBatchSize).toBe(4);
    expect(() =>
      createEmbeddersFromSettings([{ name: 'remote', provider: 'openai', dimensions: 16 }]),
    ).toThrow(/needs base_url/);
    expect(() =>
      createEmbeddersFromSettings([
        { name: 'local', provider: 'onnx', dimensions: 384, model_path: '/models/minilm' },
      ]),
    ).toThrow(/local: model_path \/models\/minilm is not a directory/);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(retryAfterMs('soon')).toBeUndefined();
  });
});
