/**
 * Retrieval over a running service's HTTP API, for `weir eval`: the search modes POST
 * /api/v1/chat/search/{keyword,vector,rrf}; the `chat` mode POSTs /api/v1/chat/complete and
 * ranks the sources its answer cites, in citation order.
 */
import type { Retrieve, Retrieved } from './evaluate.js';
import type { ResultSource } from './metrics.js';

export const searchModes = ['keyword', 'vector', 'rrf'] as const;
export const evaluationModes = [...searchModes, 'chat'] as const;
export type EvaluationMode = (typeof evaluationModes)[number];

export function isEvaluationMode(mode: string): mode is EvaluationMode {
  return (evaluationModes as readonly string[]).includes(mode);
}

/** The API root for a service URL: `http://host:8080` and `http://host:8080/api/v1/` both work. */
export function apiRoot(url: string): string {
  const trimmed = url.replace(/\/+$/, '');
  return trimmed.endsWith('/api/v1') ? trimmed : `${trimmed}/api/v1`;
}

interface CitedSource {
  citation: number;
  cited: boolean;
  source: ResultSource;
}

/** The sources an answer cites, in citation order. */
export function citedSources(sources: readonly CitedSource[]): ResultSource[] {
  return sources
    .filter((source) => source.cited)
    .sort((a, b) => a.citation - b.citation)
    .map((source) => source.source);
}

export function httpRetrieve(options: {
  url: string;
  /** Segments asked of each search (enough for 10 distinct documents). */
  limit: number;
  apiKey?: string | undefined;
}): Retrieve {
  const root = apiRoot(options.url);
  const post = async (
    path: string,
    body: unknown,
    signal?: AbortSignal,
  ): Promise<Record<string, unknown>> => {
    const send = () =>
      fetch(`${root}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
        },
        body: JSON.stringify(body),
        signal: signal ?? null,
      });
    // Searches and answers change nothing, so a request whose connection failed is sent once
    // more: a kept-alive socket the server closed while this process was busy (a bench's long
    // in-process phase) fails the first request sent on it ("fetch failed", bench:quality's f001).
    const response = await send().catch((error: unknown) => {
      if (signal?.aborted || !(error instanceof TypeError)) throw error;
      return send();
    });
    const text = await response.text();
    let parsed: Record<string, unknown> | undefined;
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      parsed = undefined;
    }
    if (!response.ok) {
      const detail = parsed?.detail === undefined ? text.slice(0, 200) : JSON.stringify(parsed.detail);
      const code = typeof parsed?.code === 'string' ? ` ${parsed.code}` : '';
      throw new Error(`HTTP ${response.status}${code}: ${detail}`);
    }
    if (!parsed) throw new Error(`${path} answered ${response.status} with a body that is not JSON`);
    return parsed;
  };
  return async (mode, question, signal): Promise<Retrieved> => {
    if (mode === 'chat') {
      const body = await post('/chat/complete', { query: question.question }, signal);
      return {
        sources: citedSources((body.sources as CitedSource[] | undefined) ?? []),
        took_ms: Number(body.retrieval_ms ?? 0) + Number(body.generation_ms ?? 0),
      };
    }
    const body = await post(
      `/chat/search/${mode}`,
      { query: question.question, limit: options.limit },
      signal,
    );
    const results = (body.results as { source: ResultSource }[] | undefined) ?? [];
    return {
      sources: results.map((result) => result.source),
      took_ms: typeof body.took_ms === 'number' ? body.took_ms : undefined,
    };
  };
}
