/**
 * An OpenAI-compatible `/chat/completions` client on the one outbound client (src/http/
 * outbound.ts, under the model endpoint policy: see egress-policy.ts `modelEndpointPolicy`):
 * JSON for complete, SSE (`data: {chunk}` ... `data: [DONE]`) for stream. Not the AI SDK: this
 * is one endpoint and one chunk shape, and a dependency would not shorten it. A redirect is not
 * followed (the prompt and the API key stay with base_url): its 3xx fails the generation.
 *
 * `timeout_ms` is an idle timeout: the time allowed for the response to start and, when
 * streaming, between two chunks; so a long answer that keeps arriving is not cut off, and a
 * stalled one is. The caller's signal (client disconnect) aborts the upstream request.
 */
import { type EgressPolicy, modelEndpointPolicy } from '../http/egress-policy.js';
import { EgressRefused, type OutboundResponse, outboundRequest } from '../http/outbound.js';
import {
  type ChatMessage,
  GenerationError,
  type GenerationRequest,
  type LlmProfile,
  type LlmProvider,
  type Usage,
} from './provider.js';
import { readSse } from './sse.js';

export function createOpenAiProvider(
  profile: LlmProfile,
  egress: EgressPolicy = modelEndpointPolicy(),
): LlmProvider {
  const endpoint = profile.base_url ? `${profile.base_url.replace(/\/+$/, '')}/chat/completions` : undefined;
  const modelFor = (request: Pick<GenerationRequest, 'model'>) => request.model ?? profile.model ?? '';

  async function post(
    request: GenerationRequest,
    stream: boolean,
    guard: IdleGuard,
  ): Promise<OutboundResponse> {
    if (!endpoint) throw new GenerationError(`llm profile ${profile.name} has no base_url`);
    const model = modelFor(request);
    if (!model) throw new GenerationError(`llm profile ${profile.name} names no model`);
    const body = {
      model,
      messages: request.messages.map((message: ChatMessage) => ({
        role: message.role,
        content: message.content,
      })),
      stream,
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
    };
    let response: OutboundResponse;
    try {
      guard.arm();
      response = await outboundRequest({
        url: endpoint,
        egress,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: stream ? 'text/event-stream' : 'application/json',
          ...(profile.api_key ? { authorization: `Bearer ${profile.api_key}` } : {}),
        },
        body: JSON.stringify(body),
        signal: guard.signal,
      });
    } catch (error) {
      throw guard.explain(error, `cannot reach the language model of profile ${profile.name}`);
    }
    if (!response.ok) {
      const text = await response.text().catch(() => '');
      throw new GenerationError(
        `language model of profile ${profile.name} answered HTTP ${response.status}${text ? `: ${snippet(text)}` : ''}`,
      );
    }
    return response;
  }

  return {
    profile: profile.name,
    provider: 'openai',
    modelFor,

    async complete(request) {
      const guard = idleGuard(profile.timeout_ms, request.signal);
      try {
        const response = await post(request, false, guard);
        let payload: {
          choices?: { message?: { content?: unknown } }[];
          usage?: { prompt_tokens?: number; completion_tokens?: number };
        };
        try {
          payload = (await response.json()) as typeof payload;
        } catch (error) {
          throw guard.explain(error, `language model of profile ${profile.name} sent a malformed reply`);
        }
        const content = payload.choices?.[0]?.message?.content;
        if (typeof content !== 'string') {
          throw new GenerationError(`language model of profile ${profile.name} sent no message content`);
        }
        return { text: content, usage: usageOf(payload.usage) };
      } finally {
        guard.done();
      }
    },

    async *stream(request) {
      const guard = idleGuard(profile.timeout_ms, request.signal);
      try {
        const response = await post(request, true, guard);
        if (!response.body) throw new GenerationError('language model sent no body');
        guard.arm();
        try {
          for await (const event of readSse(response.body as unknown as AsyncIterable<Uint8Array>)) {
            guard.arm();
            if (event.data === '[DONE]') return;
            let chunk: { choices?: { delta?: { content?: unknown } }[]; error?: { message?: string } };
            try {
              chunk = JSON.parse(event.data);
            } catch {
              throw new GenerationError(`language model of profile ${profile.name} sent a malformed chunk`);
            }
            if (chunk.error) {
              throw new GenerationError(
                `language model failed: ${snippet(String(chunk.error.message ?? 'error'))}`,
              );
            }
            const content = chunk.choices?.[0]?.delta?.content;
            if (typeof content === 'string' && content.length > 0) yield content;
          }
        } catch (error) {
          throw guard.explain(error, `the answer stream of profile ${profile.name} broke off`);
        }
        // The body ended without [DONE]: the server went away mid-answer.
        throw new GenerationError(`the answer stream of profile ${profile.name} ended before [DONE]`);
      } finally {
        guard.done();
      }
    },
  };
}

interface IdleGuard {
  signal: AbortSignal;
  /** (Re)starts the idle timer. */
  arm(): void;
  done(): void;
  /** A GenerationError saying whether the cause was the timeout, the caller, or `fallback`. */
  explain(error: unknown, fallback: string): Error;
}

function idleGuard(timeoutMs: number, outer: AbortSignal | undefined): IdleGuard {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) controller.abort(outer.reason);
  else outer?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    arm() {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        controller.abort(new GenerationError(`language model did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
    },
    done() {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onAbort);
    },
    explain(error, fallback) {
      if (error instanceof GenerationError) return error;
      if (timedOut) return new GenerationError(`language model did not answer within ${timeoutMs} ms`);
      if (outer?.aborted) return new GenerationError('generation cancelled: the client went away');
      if (error instanceof EgressRefused) return new GenerationError(`${fallback}: ${error.message}`);
      const cause = (error as { cause?: { code?: string } })?.cause?.code;
      return new GenerationError(`${fallback}${cause ? ` (${cause})` : ''}`);
    },
  };
}

function usageOf(usage: { prompt_tokens?: number; completion_tokens?: number } | undefined): Usage | null {
  if (!usage || typeof usage.prompt_tokens !== 'number' || typeof usage.completion_tokens !== 'number')
    return null;
  return { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens };
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}...` : flat;
}
