/**
 * Chat and search endpoints (spec 4.3, 6.3): capabilities, sources, keyword/vector/RRF search,
 * chat complete and chat stream. The work lives in src/search and src/chat; this module maps
 * requests onto it and errors onto statuses.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { type Static, Type } from 'typebox';
import {
  type ChatDependencies,
  chatDefaults,
  elapsed,
  generationRequest,
  presentSources,
  resolveChat,
  retrieveContext,
} from '../chat/chat-service.js';
import { createTemplatesRepository } from '../db/templates-repository.js';
import type { EmbedderCatalog } from '../embedding/embedder.js';
import { createEmbeddersFromSettings } from '../embedding/embedders.js';
import { loadSharedWordVectors } from '../embedding/word-vectors.js';
import { AppError, errorBody, isAppError } from '../errors.js';
import { GenerationError } from '../llm/llm.js';
import { embeddingModelStatus, indexedModels, languageList, listSources } from '../search/catalogue.js';
import { createKeywordMemoryIndex } from '../search/keyword-memory-index.js';
import type { LsaIndex } from '../search/lsa-index.js';
import { createQueryExpander } from '../search/query-expansion.js';
import { builtInTranslators } from '../search/query-translation.js';
import {
  createSearchService,
  type SearchRequest,
  type SearchService,
  type SearchType,
  searchDefaults,
} from '../search/search-service.js';
import type { ApiContext } from './context.js';
import { evaluationRoutes } from './evaluation.js';
import type {
  ChatCompletionRequest,
  KeywordSearchRequest,
  RRFSearchRequest,
  VectorSearchRequest,
} from './schemas/chat.js';
import { contextModes, MAX_MODEL_NAME, retrievalStrategies } from './schemas/chat.js';

import { errorResponses, pageOf, pageQuery } from './schemas/common.js';
import { eventStreamResponse } from './schemas/media.js';
import { openEventStream } from './sse-stream.js';

const SourcesQuery = Type.Object({
  embedding_model: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_MODEL_NAME })),
  min_segments: Type.Integer({ minimum: 1, default: 1 }),
  ...pageQuery({ defaultLimit: 1000, maxLimit: 1000 }),
});

/** What the chat routes share: the embedders and the search service, checked on each use. */
interface ChatServices {
  embedders: EmbedderCatalog | undefined;
  /** The search service, or `search_unavailable` (no database, or bad embedder settings). */
  requireSearch: () => SearchService;
  chatDeps: () => ChatDependencies;
}

export async function chatRoutes(app: FastifyInstance, context: ApiContext): Promise<void> {
  const services = chatServices(context, await lsaIndexOf(app, context));
  capabilitiesRoute(app, context, services);
  sourcesRoute(app, context);
  searchRoutes(app, services.requireSearch);
  await evaluationRoutes(app, { search: services.requireSearch, chat: services.chatDeps });
  completeRoute(app, services.chatDeps);
  streamRoute(app, context, services.chatDeps);
}

/**
 * The corpus LSA when WEIR_SEARCH_LSA=on (lsa-index.ts). Its module is loaded only then, so the
 * setting off costs no memory and no work.
 */
async function lsaIndexOf(app: FastifyInstance, context: ApiContext): Promise<LsaIndex | undefined> {
  if (!context.database || context.settings.search_lsa !== 'on') return undefined;
  const { createLsaIndex } = await import('../search/lsa-index.js');
  const index = createLsaIndex(context.database.db, context.events, {
    ...context.lsaOptions,
    onError: (error) => app.log.error({ err: error }, 'building the LSA vectors failed'),
  });
  app.addHook('onClose', async () => index.close());
  return index;
}

function chatServices(context: ApiContext, lsa: LsaIndex | undefined): ChatServices {
  let embedders: EmbedderCatalog | undefined;
  let embedderProblem: string | undefined;
  try {
    embedders = createEmbeddersFromSettings(context.settings.embedding_models);
  } catch (error) {
    embedderProblem = (error as Error).message;
  }
  const search: SearchService | undefined = context.database
    ? createSearchService({
        db: context.database.db,
        embedders,
        expander: createQueryExpander({
          db: context.database.db,
          vectors: () => loadSharedWordVectors(),
        }),
        translators: builtInTranslators(context.database.db),
        keywordIndex:
          context.database.kind === 'pglite' && (context.keywordIndex ?? 'memory') === 'memory'
            ? createKeywordMemoryIndex(context.database.db)
            : undefined,
        exactVectorLimit: context.keywordIndex === 'sql-exact' ? Number.POSITIVE_INFINITY : undefined,
        lsa,
      })
    : undefined;
  const templates = context.database ? createTemplatesRepository(context.database.db) : undefined;

  const requireSearch = (): SearchService => {
    if (!search)
      throw new AppError('search_unavailable', 'search needs the database, which is not available');
    if (embedderProblem) throw new AppError('search_unavailable', embedderProblem);
    return search;
  };
  const chatDeps = (): ChatDependencies => ({
    settings: context.settings,
    search: requireSearch(),
    templates,
  });
  return { embedders, requireSearch, chatDeps };
}

function capabilitiesRoute(app: FastifyInstance, context: ApiContext, services: ChatServices): void {
  app.get(
    '/chat/capabilities',
    {
      schema: {
        tags: ['chat'],
        summary: 'LLM profiles, embedding models with index status, strategies, languages, defaults',
        response: { 200: Type.Ref('CapabilitiesResponse'), ...errorResponses(503) },
      },
    },
    async () => {
      const service = services.requireSearch();
      const [vectorSupport, indexed] = await Promise.all([
        service.vectorSupport(),
        indexedModels(requireDatabase(context)),
      ]);
      const profiles = context.settings.llm_profiles;
      return {
        llm_models: profiles.map((profile, index) => ({
          name: profile.name,
          provider: profile.provider,
          model: profile.model ?? null,
          is_default: index === 0,
        })),
        embedding_models: embeddingModelStatus(context.settings, indexed, vectorSupport),
        context_modes: [...contextModes],
        retrieval_strategies: vectorSupport ? [...retrievalStrategies] : ['keyword'],
        languages: languageList(),
        defaults: {
          llm_profile: profiles[0]?.name ?? null,
          embedding_model: services.embedders?.defaultModel ?? null,
          strategy: vectorSupport ? chatDefaults.strategy : 'keyword',
          context_mode: chatDefaults.contextMode,
          context_limit: chatDefaults.limit,
          search_limit: searchDefaults.limit,
          rrf_k: searchDefaults.k,
          candidate_depth: searchDefaults.depth,
          temperature: null,
          vector_search: vectorSupport,
        },
      };
    },
  );
}

function sourcesRoute(app: FastifyInstance, context: ApiContext): void {
  app.get<{ Querystring: Static<typeof SourcesQuery> }>(
    '/chat/sources',
    {
      schema: {
        tags: ['chat'],
        summary: 'Executions with indexed embeddings',
        querystring: SourcesQuery,
        response: { 200: Type.Ref('SourcesResponse'), ...errorResponses(422, 503) },
      },
    },
    async (request) => {
      const sources = await listSources(requireDatabase(context), {
        embeddingModel: request.query.embedding_model,
        minSegments: request.query.min_segments,
      });
      return { sources: pageOf(sources, request.query), total: sources.length };
    },
  );
}

function searchRoutes(app: FastifyInstance, requireSearch: () => SearchService): void {
  // Each route is typed with its own body schema: a keyword search has no RRF fields.
  const searchRoute = <Body extends SearchRequest>(type: SearchType, body: string, summary: string) =>
    app.post<{ Body: Body }>(
      `/chat/search/${type}`,
      {
        schema: {
          tags: ['chat'],
          summary,
          body: Type.Ref(body),
          response: { 200: Type.Ref('RRFSearchResponse'), ...errorResponses(400, 422, 503) },
        },
      },
      async (request) => requireSearch().search(type, request.body as Body),
    );
  searchRoute<Static<typeof RRFSearchRequest>>(
    'rrf',
    'RRFSearchRequest',
    'Hybrid search: reciprocal rank fusion of vector and keyword rankings',
  );
  searchRoute<Static<typeof KeywordSearchRequest>>(
    'keyword',
    'KeywordSearchRequest',
    'Full-text search with language-specific stemming',
  );
  searchRoute<Static<typeof VectorSearchRequest>>(
    'vector',
    'VectorSearchRequest',
    'Vector search (cosine) over one embedding model',
  );
}

function completeRoute(app: FastifyInstance, chatDeps: () => ChatDependencies): void {
  app.post<{ Body: Static<typeof ChatCompletionRequest> }>(
    '/chat/complete',
    {
      schema: {
        tags: ['chat'],
        summary: 'Retrieve, prompt with numbered sources, generate one answer',
        body: Type.Ref('ChatCompletionRequest'),
        response: { 200: Type.Ref('ChatCompletionResponse'), ...errorResponses(400, 422, 500, 503) },
      },
    },
    async (request) => {
      const deps = chatDeps();
      const chat = await resolveChat(deps, request.body);
      const retrieved = await retrieveContext(deps, chat);
      const started = performance.now();
      let generated: Awaited<ReturnType<typeof chat.provider.complete>>;
      try {
        generated = await chat.provider.complete(generationRequest(chat, retrieved));
      } catch (error) {
        throw generationFailure(error);
      }
      return {
        answer: generated.text,
        sources: presentSources(retrieved, generated.text),
        model: chat.provider.modelFor({ model: chat.model }),
        provider: chat.provider.provider,
        profile: chat.provider.profile,
        strategy: chat.contextMode === 'none' ? 'none' : chat.strategy,
        template_id: chat.templateId,
        usage: generated.usage,
        retrieval_ms: retrieved.retrievalMs,
        generation_ms: elapsed(started),
      };
    },
  );
}

function streamRoute(app: FastifyInstance, context: ApiContext, chatDeps: () => ChatDependencies): void {
  app.post<{ Body: Static<typeof ChatCompletionRequest> }>(
    '/chat/stream',
    {
      schema: {
        tags: ['chat'],
        summary: 'Server-sent events: one sources event, text events, one done event (spec 6.3)',
        body: Type.Ref('ChatCompletionRequest'),
        response: {
          200: eventStreamResponse('one sources event, text events, one done event (spec 6.3)'),
          ...errorResponses(400, 422, 503),
        },
      },
    },
    async (request, reply) => {
      // Configuration and retrieval run before the stream opens, so their 400 and 503 are
      // real statuses; only generation errors travel as events.
      const deps = chatDeps();
      const chat = await resolveChat(deps, request.body);
      const retrieved = await retrieveContext(deps, chat);
      await streamAnswer(reply, context.settings.chat_heartbeat_ms, async (send, signal) => {
        await send('sources', { sources: presentSources(retrieved) });
        for await (const content of chat.provider.stream(generationRequest(chat, retrieved, signal))) {
          await send('text', { content });
        }
      });
    },
  );
}

/** Resolves once the event is written, or once the socket has drained when its buffer was full. */
type Send = (event: string, data: unknown) => Promise<void>;

/**
 * Runs `produce` behind an open event stream (the shared writer, src/api/sse-stream.ts):
 * heartbeat comments after `heartbeatMs` of quiet, an `error` event when it throws, then `done`
 * with whether it completed. A client that goes away aborts `signal`, which the provider passes
 * to the upstream request. `send` waits for a full socket to drain, so a slow reader holds the
 * model back instead of the answer piling up in memory.
 */
async function streamAnswer(
  reply: FastifyReply,
  heartbeatMs: number,
  produce: (send: Send, signal: AbortSignal) => Promise<void>,
): Promise<void> {
  const stream = openEventStream(reply, { heartbeatAfterQuietMs: heartbeatMs });
  const send: Send = (event, data) => stream.send({ event, data });
  let completed = false;
  try {
    await produce(send, stream.signal);
    completed = true;
  } catch (error) {
    // A stream closed by its client wants no error event: nobody reads it.
    if (stream.open) {
      const failure = generationFailure(error);
      reply.log?.warn({ err: error }, 'chat stream generation failed');
      await send('error', errorBody(failure));
    }
  } finally {
    stream.end(completed ? 'completed' : 'failed', { event: 'done', data: { completed } });
  }
}

function generationFailure(error: unknown): AppError {
  if (isAppError(error)) return error;
  if (error instanceof GenerationError) return new AppError('chat_generation_failed', error.message);
  return new AppError('chat_generation_failed', 'generation failed unexpectedly', { cause: error });
}

function requireDatabase(context: ApiContext) {
  if (!context.database)
    throw new AppError('search_unavailable', 'chat needs the database, which is not available');
  return context.database.db;
}
