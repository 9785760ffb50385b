/**
 * How the CLI talks to Weir: over HTTP to a running service (`--url`), or in-process to an
 * embedded one through Fastify's inject, so both ways go through the same API and answers.
 */
import type { FastifyInstance } from 'fastify';
import { apiRoot } from '../evaluation/http-retrieve.js';

export interface ApiAnswer {
  status: number;
  body: unknown;
}

/** One API call: `path` under /api/v1; a string body is sent as YAML, anything else as JSON. */
export type ApiCall = (method: 'GET' | 'POST', path: string, body?: unknown) => Promise<ApiAnswer>;

/** An answer outside 2xx, told as the API's error code and detail. */
export class ApiCallError extends Error {
  override name = 'ApiCallError';
}

/** `http://127.0.0.1:$PORT`, the port `weir serve` listens on with the same environment. */
export function defaultUrl(environment: NodeJS.ProcessEnv): string {
  const port = environment.PORT?.trim();
  return `http://127.0.0.1:${port ? port : '8080'}`;
}

function encode(body: unknown): { headers: Record<string, string>; payload?: string } {
  if (body === undefined) return { headers: {} };
  if (typeof body === 'string') return { headers: { 'content-type': 'application/yaml' }, payload: body };
  return { headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) };
}

function decode(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function httpCall(url: string, apiKey: string | undefined): ApiCall {
  const root = apiRoot(url);
  return async (method, path, body) => {
    const { headers, payload } = encode(body);
    const response = await fetch(`${root}${path}`, {
      method,
      headers: { ...headers, ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
      ...(payload === undefined ? {} : { body: payload }),
    });
    return { status: response.status, body: decode(await response.text()) };
  };
}

export function injectCall(app: FastifyInstance): ApiCall {
  return async (method, path, body) => {
    const { headers, payload } = encode(body);
    const response = await app.inject({
      method,
      url: `/api/v1${path}`,
      headers,
      ...(payload === undefined ? {} : { payload }),
    });
    return { status: response.statusCode, body: decode(response.body) };
  };
}

/** The body of a 2xx answer; otherwise an ApiCallError naming the status, code and detail. */
export async function expectOk<T>(call: ApiCall, method: 'GET' | 'POST', path: string, body?: unknown) {
  const answer = await call(method, path, body);
  if (answer.status >= 200 && answer.status < 300) return answer.body as T;
  const problem = answer.body as { code?: unknown; detail?: unknown } | string;
  const told =
    typeof problem === 'string'
      ? problem.slice(0, 300)
      : [problem?.code, problem?.detail]
          .filter((part) => part !== undefined)
          .map((part) => (typeof part === 'string' ? part : JSON.stringify(part).slice(0, 300)))
          .join(': ');
  throw new ApiCallError(`${method} ${path} answered ${answer.status}${told ? ` (${told})` : ''}`);
}

/** "cannot reach URL: reason" for a fetch that never got an answer, else undefined. */
export function unreachable(url: string, error: unknown): string | undefined {
  if (!(error instanceof TypeError)) return undefined;
  const cause = (error as TypeError & { cause?: Error }).cause?.message ?? error.message;
  return `cannot reach ${url}: ${cause}`;
}
