/**
 * A local OpenAI-compatible chat-completions server (node:http on loopback) speaking the real
 * protocol: JSON for `stream: false`, SSE `data: {chunk}` lines ending in `data: [DONE]` for
 * `stream: true`. Its behaviour is switchable per test: answer at once, fail mid-stream,
 * answer HTTP 500, or stall (for timeouts and client disconnects).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type LlmBehaviour = 'answer' | 'fail-mid-stream' | 'http-500' | 'stall';

export interface LlmRequestRecord {
  body: {
    model: string;
    messages: { role: string; content: string }[];
    stream?: boolean;
    temperature?: number;
    max_tokens?: number;
  };
  authorization: string | undefined;
}

export interface LlmServer {
  /** Base URL to put in an llm profile (`.../v1`). */
  baseUrl: string;
  behaviour: LlmBehaviour;
  /** The answer, sent as one JSON message or in chunks of `chunkSize` characters. */
  answer: string;
  /** When set, the answer is computed from each request (a model that reads its prompt). */
  respond?: ((body: LlmRequestRecord['body']) => string) | undefined;
  chunkSize: number;
  requests: LlmRequestRecord[];
  /** Requests whose client went away before the server finished answering. */
  aborted: number;
  close(): Promise<void>;
}

export async function startLlmServer(): Promise<LlmServer> {
  const state: LlmServer = {
    baseUrl: '',
    behaviour: 'answer',
    answer: 'Runs create executions [1]. Vacuum reclaims space [2].',
    chunkSize: 8,
    requests: [],
    aborted: 0,
    close: async () => {},
  };
  const open = new Set<ServerResponse>();

  const server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
      response
        .writeHead(404, { 'content-type': 'application/json' })
        .end('{"error":{"message":"not found"}}');
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as LlmRequestRecord['body'];
    state.requests.push({ body, authorization: request.headers.authorization });
    open.add(response);
    response.on('close', () => {
      open.delete(response);
      if (!response.writableFinished) state.aborted++;
    });

    switch (state.behaviour) {
      case 'stall':
        return; // never answers; the client's timeout or disconnect ends it
      case 'http-500':
        response
          .writeHead(500, { 'content-type': 'application/json' })
          .end('{"error":{"message":"model overloaded","type":"server_error"}}');
        return;
    }
    const created = Math.floor(Date.now() / 1000);
    if (!body.stream) {
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-test',
          object: 'chat.completion',
          created,
          model: body.model,
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: state.respond ? state.respond(body) : state.answer },
              finish_reason: 'stop',
            },
          ],
          usage: { prompt_tokens: 42, completion_tokens: 7, total_tokens: 49 },
        }),
      );
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      `data: ${JSON.stringify({
        id: 'chatcmpl-test',
        object: 'chat.completion.chunk',
        created,
        model: body.model,
        choices: [{ index: 0, delta, finish_reason: finish }],
      })}\n\n`;
    response.write(chunk({ role: 'assistant', content: '' }));
    const pieces: string[] = [];
    for (let index = 0; index < state.answer.length; index += state.chunkSize) {
      pieces.push(state.answer.slice(index, index + state.chunkSize));
    }
    for (const [index, piece] of pieces.entries()) {
      if (state.behaviour === 'fail-mid-stream' && index === 2) {
        // The upstream dies mid-answer: the connection is cut without [DONE] (after the
        // chunks already written have left, so the client sees them first).
        await new Promise((resolve) => setTimeout(resolve, 50));
        response.destroy();
        return;
      }
      response.write(chunk({ content: piece }));
    }
    response.write(chunk({}, 'stop'));
    response.end('data: [DONE]\n\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  state.baseUrl = `http://127.0.0.1:${port}/v1`;
  state.close = async () => {
    for (const response of open) response.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}

/**
 * A model for batch_synthesizer that reads its prompt: for each concept block (`slug=...`
 * followed by `[n]` passages), a page whose summary cites the first passage and whose
 * paragraphs cite each passage once.
 */
export function conceptPageAnswer(body: LlmRequestRecord['body']): string {
  const prompt = body.messages.find((message) => message.role === 'user')?.content ?? '';
  const pages = prompt.split('\n\n---\n\n').map((block) => {
    const slug = /slug=([a-z0-9-]+)/.exec(block)?.[1] ?? '';
    const citations = [...block.matchAll(/^\[(\d+)\]/gm)].map((match) => Number(match[1]));
    return {
      slug,
      summary: { text: 'This concept is described by the sources below.', citations: citations.slice(0, 1) },
      sections: [
        {
          heading: 'What the sources say',
          paragraphs: citations.map((citation) => ({
            text: `Passage ${citation} explains one aspect of it.`,
            citations: [citation],
          })),
        },
      ],
    };
  });
  return JSON.stringify({ pages });
}
