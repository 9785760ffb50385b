/**
 * A local OpenAI-compatible embeddings server on loopback (node:http), speaking the real wire
 * format: `POST /v1/embeddings {model, input, encoding_format}` answered with
 * `{object: 'list', data: [{object: 'embedding', index, embedding}], model, usage}`.
 * Vectors are the hash embedding of each input, so similar texts are near each other.
 * Tests queue faults (a 429 with Retry-After, a 500, a malformed body, wrong dimensions)
 * that the next requests answer with, and read every request received.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hashEmbedding } from '../../src/embedding/hash-embedder.js';

export type EmbeddingsFault =
  | { kind: 'status'; status: number; retryAfter?: string }
  | { kind: 'malformed' }
  | { kind: 'wrong-dimensions' }
  | { kind: 'wrong-count' };

export interface EmbeddingsRequest {
  authorization: string | undefined;
  model: string;
  input: string[];
  at: number;
}

export interface EmbeddingsServer {
  /** `http://127.0.0.1:<port>/v1`, the base_url of the provider. */
  baseUrl: string;
  requests: EmbeddingsRequest[];
  fail(fault: EmbeddingsFault): void;
  close(): Promise<void>;
}

export async function startEmbeddingsServer(options: {
  dimensions: number;
  apiKey?: string;
}): Promise<EmbeddingsServer> {
  const faults: EmbeddingsFault[] = [];
  const requests: EmbeddingsRequest[] = [];
  const server = createServer(async (request, response) => {
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'application/json', ...headers });
      response.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    if (request.method !== 'POST' || request.url !== '/v1/embeddings') {
      send(404, { error: { message: 'not found', type: 'invalid_request_error' } });
      return;
    }
    if (options.apiKey && request.headers.authorization !== `Bearer ${options.apiKey}`) {
      send(401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } });
      return;
    }
    const body = JSON.parse(await readBody(request)) as { model: string; input: string | string[] };
    const input = typeof body.input === 'string' ? [body.input] : body.input;
    requests.push({ authorization: request.headers.authorization, model: body.model, input, at: Date.now() });
    const fault = faults.shift();
    if (fault?.kind === 'status') {
      send(
        fault.status,
        {
          error: {
            message: fault.status === 429 ? 'Rate limit reached' : 'server error',
            type: 'server_error',
          },
        },
        fault.retryAfter ? { 'retry-after': fault.retryAfter } : {},
      );
      return;
    }
    if (fault?.kind === 'malformed') {
      send(200, '{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,');
      return;
    }
    const dimensions = fault?.kind === 'wrong-dimensions' ? options.dimensions + 1 : options.dimensions;
    const items = fault?.kind === 'wrong-count' ? input.slice(1) : input;
    send(200, {
      object: 'list',
      data: items.map((text, index) => ({
        object: 'embedding',
        index,
        embedding: Array.from(hashEmbedding(text, dimensions)),
      })),
      model: body.model,
      usage: { prompt_tokens: input.length, total_tokens: input.length },
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    fail: (fault) => faults.push(fault),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
