/**
 * POST /chat/search/eval: runs a question set through the search service (and optionally
 * chat) in process and answers the evaluation report (src/evaluation). Registered by
 * chatRoutes, so it searches with the same service and settings as the search endpoints.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import {
  type ChatDependencies,
  elapsed,
  generationRequest,
  presentSources,
  resolveChat,
  retrieveContext,
} from '../chat/chat-service.js';
import { AppError, isAppError } from '../errors.js';
import { evaluateRetrieval, type Retrieve } from '../evaluation/evaluate.js';
import { citedSources } from '../evaluation/http-retrieve.js';
import {
  type EvaluationQuestion,
  QuestionsError,
  requireUniqueIds,
  toQuestion,
} from '../evaluation/questions.js';
import { GenerationError } from '../llm/llm.js';
import type { SearchRequest, SearchService, SearchType } from '../search/search-service.js';
import { errorResponses } from './schemas/common.js';

interface EvaluationBody extends Omit<SearchRequest, 'query'> {
  questions: Record<string, unknown>[];
  modes?: ('keyword' | 'vector' | 'rrf' | 'chat')[];
  limit: number;
}

export async function evaluationRoutes(
  app: FastifyInstance,
  deps: { search: () => SearchService; chat: () => ChatDependencies },
): Promise<void> {
  app.post<{ Body: EvaluationBody }>(
    '/chat/search/eval',
    {
      schema: {
        tags: ['chat'],
        summary:
          'Retrieval evaluation: hit@1/5/10, MRR@10 and nDCG@10 per mode over questions with their expected pages, latency and misses (Weir extension)',
        body: Type.Ref('EvaluationRequest'),
        response: { 200: Type.Ref('EvaluationReport'), ...errorResponses(400, 422, 503) },
      },
    },
    async (request, reply) => {
      const started = performance.now();
      const search = deps.search();
      const { questions: items, modes: requested, ...options } = request.body;
      const questions = normaliseQuestions(items);
      const vectorSupport = await search.vectorSupport();
      const modes = requested ?? (vectorSupport ? ['keyword', 'vector', 'rrf'] : ['keyword']);
      if (!vectorSupport && modes.some((mode) => mode === 'vector' || mode === 'rrf')) {
        throw new AppError(
          'vector_search_unavailable',
          'vector and RRF search need the pgvector extension, which this PostgreSQL server does not have: evaluate keyword (and chat) only, or use the embedded database',
        );
      }
      // A client that goes away stops the run between questions.
      const abort = new AbortController();
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) abort.abort(new Error('client disconnected'));
      });
      const retrieve = inProcessRetrieve(search, deps.chat, options, (error) =>
        request.log.error({ err: error }, 'evaluation: a retrieval failed unexpectedly'),
      );
      const report = await evaluateRetrieval({ questions, modes, retrieve, signal: abort.signal });
      return { ...report, parameters: options, took_ms: elapsed(started) };
    },
  );
}

/**
 * Searches (or chats) in process. A failed question is reported with its error code; an
 * unexpected error is logged and reported without its internal message, as the error handler
 * does for a 500.
 */
function inProcessRetrieve(
  search: SearchService,
  chatDeps: () => ChatDependencies,
  options: Omit<SearchRequest, 'query'>,
  logUnexpected: (error: unknown) => void,
): Retrieve {
  return async (mode, question, signal) => {
    try {
      if (mode === 'chat') return await chatRetrieve(chatDeps(), question.question, signal);
      const response = await search.search(
        mode as SearchType,
        { ...options, query: question.question },
        signal,
      );
      return { sources: response.results.map((result) => result.source), took_ms: response.took_ms };
    } catch (error) {
      if (isAppError(error)) throw new Error(`${error.code}: ${error.message}`);
      if (error instanceof GenerationError) throw new Error(`chat_generation_failed: ${error.message}`);
      if (signal?.aborted) throw error;
      logUnexpected(error);
      throw new Error('internal_error: the retrieval failed unexpectedly (see the service log)');
    }
  };
}

/** Chat with its defaults; the sources its answer cites, in citation order. */
async function chatRetrieve(deps: ChatDependencies, query: string, signal: AbortSignal | undefined) {
  const chat = await resolveChat(deps, { query, history: [] });
  const retrieved = await retrieveContext(deps, chat, signal);
  const generated = await chat.provider.complete(generationRequest(chat, retrieved, signal));
  return { sources: citedSources(presentSources(retrieved, generated.text)) };
}

function normaliseQuestions(items: readonly Record<string, unknown>[]): EvaluationQuestion[] {
  try {
    return requireUniqueIds(
      items.map((item, index) => toQuestion(item, `questions[${index}]`, `q${index + 1}`)),
    );
  } catch (error) {
    if (error instanceof QuestionsError) throw new AppError('search_request_invalid', error.message);
    throw error;
  }
}
