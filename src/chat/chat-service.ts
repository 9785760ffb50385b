/**
 * Chat (spec 4.3 rule 2, 6.3): resolve the configuration (defaults, then the template, then
 * the request: the request wins), retrieve passages with the chosen strategy, number them,
 * build the prompt and hand it to the profile's provider. The API layer decides whether the
 * answer goes out whole (complete) or as events (stream).
 */
import { Value } from 'typebox/value';
import { LlmSettings, RagSettings } from '../api/schemas/chat.js';
import type { TemplateRecord, TemplatesRepository } from '../db/templates-repository.js';
import { AppError } from '../errors.js';
import { createLlmProvider, type LlmProvider, type Passage } from '../llm/llm.js';
import type { SearchResult, SearchService } from '../search/search-service.js';
import type { TextAnalyzer } from '../search/text-analysis.js';
import type { Settings } from '../settings.js';
import { buildPrompt, citedNumbers } from './prompt.js';
import { type RetrievalStrategy, retrieve } from './retrieval.js';

export interface ChatRequestBody {
  query: string;
  history?: { role: 'user' | 'assistant'; content: string }[] | undefined;
  configuration?:
    | {
        template_id?: string | undefined;
        persona?: string | undefined;
        system_prompt?: string | undefined;
        llm_profile?: string | undefined;
        model?: string | undefined;
        temperature?: number | undefined;
        max_tokens?: number | undefined;
        strategy?: RetrievalStrategy | undefined;
        sources?: string[] | undefined;
        source_weights?: Record<string, number> | undefined;
        limit?: number | undefined;
        min_score?: number | undefined;
        embedding_model?: string | undefined;
        language?: string | undefined;
        context_mode?: 'segments' | 'none' | undefined;
      }
    | undefined;
}

export interface ResolvedChat {
  query: string;
  history: { role: 'user' | 'assistant'; content: string }[];
  templateId: string | null;
  persona: string | null;
  systemPrompt: string | null;
  provider: LlmProvider;
  model: string | undefined;
  temperature: number | undefined;
  maxTokens: number | undefined;
  strategy: RetrievalStrategy;
  sources: string[];
  sourceWeights: Record<string, number>;
  limit: number;
  minScore: number;
  embeddingModel: string | undefined;
  language: string | undefined;
  contextMode: 'segments' | 'none';
}

export const chatDefaults = { limit: 5, minScore: 0, contextMode: 'segments', strategy: 'ensemble' } as const;

export interface ChatDependencies {
  settings: Settings;
  search: SearchService;
  templates: TemplatesRepository | undefined;
}

/** Checks a template's `rag` and `llm` objects; the messages name each bad field. */
export function templateSettingsProblems(fields: { rag?: unknown; llm?: unknown }): string[] {
  const problems: string[] = [];
  for (const [name, schema, value] of [
    ['rag', RagSettings, fields.rag],
    ['llm', LlmSettings, fields.llm],
  ] as const) {
    if (value === undefined) continue;
    for (const error of Value.Errors(schema, value)) {
      problems.push(`${name}${error.instancePath.replaceAll('/', '.')}: ${error.message}`);
    }
  }
  return problems;
}

export async function resolveChat(deps: ChatDependencies, body: ChatRequestBody): Promise<ResolvedChat> {
  const query = body.query.trim();
  if (query.length === 0) throw new AppError('search_request_invalid', 'query is empty');
  const request = body.configuration ?? {};
  let template: TemplateRecord | undefined;
  if (request.template_id) {
    if (!deps.templates) throw new AppError('search_unavailable', 'templates need the database');
    template = await deps.templates.find(request.template_id);
    if (!template) throw new AppError('search_request_invalid', `template ${request.template_id} not found`);
  }
  const rag = (template?.rag ?? {}) as Partial<Record<string, unknown>>;
  const llm = (template?.llm ?? {}) as Partial<Record<string, unknown>>;
  const pick = <T>(fromRequest: T | undefined, fromTemplate: unknown): T | undefined =>
    fromRequest !== undefined ? fromRequest : (fromTemplate as T | undefined);

  const profiles = deps.settings.llm_profiles;
  if (profiles.length === 0)
    throw new AppError('search_unavailable', 'no LLM profile is configured (llm_profiles)');
  const profileName = pick<string>(request.llm_profile, llm.profile) ?? (profiles[0]?.name as string);
  const profile = profiles.find((item) => item.name === profileName);
  if (!profile) {
    throw new AppError(
      'search_request_invalid',
      `unknown llm profile ${JSON.stringify(profileName)}; configured: ${profiles.map((item) => item.name).join(', ')}`,
    );
  }
  const explicitStrategy = pick<RetrievalStrategy>(request.strategy, rag.strategy);
  // Without pgvector the default falls back to keyword retrieval (reported in the response);
  // an explicitly requested vector strategy answers 503 instead.
  const strategy =
    explicitStrategy ?? ((await deps.search.vectorSupport()) ? chatDefaults.strategy : 'keyword');
  return {
    query,
    history: body.history ?? [],
    templateId: template?.id ?? null,
    persona: pick<string>(request.persona, template?.persona) ?? null,
    systemPrompt: pick<string>(request.system_prompt, template?.system_prompt) ?? null,
    provider: createLlmProvider(profile),
    model: pick<string>(request.model, llm.model),
    temperature: pick<number>(request.temperature, llm.temperature),
    maxTokens: pick<number>(request.max_tokens, llm.max_tokens),
    strategy,
    sources: pick<string[]>(request.sources, rag.sources) ?? [],
    sourceWeights: pick<Record<string, number>>(request.source_weights, rag.source_weights) ?? {},
    limit: pick<number>(request.limit, rag.limit) ?? chatDefaults.limit,
    minScore: pick<number>(request.min_score, rag.min_score) ?? chatDefaults.minScore,
    embeddingModel: pick<string>(request.embedding_model, rag.embedding_model),
    language: pick<string>(request.language, rag.language),
    contextMode:
      pick<'segments' | 'none'>(request.context_mode, rag.context_mode) ?? chatDefaults.contextMode,
  };
}

export interface RetrievedContext {
  results: SearchResult[];
  passages: Passage[];
  /** Analysis in the languages of the retrieved segments, for the offline answer. */
  analyze: TextAnalyzer;
  retrievalMs: number;
}

export async function retrieveContext(
  deps: ChatDependencies,
  chat: ResolvedChat,
  signal?: AbortSignal,
): Promise<RetrievedContext> {
  const started = performance.now();
  const results =
    chat.contextMode === 'none'
      ? []
      : await retrieve(
          deps.search,
          {
            strategy: chat.strategy,
            query: chat.query,
            sources: chat.sources,
            sourceWeights: chat.sourceWeights,
            limit: chat.limit,
            minScore: chat.minScore,
            embeddingModel: chat.embeddingModel,
            language: chat.language,
          },
          signal,
        );
  const passages = results.map((result, index) => ({
    citation: index + 1,
    text: result.text,
    title: result.source.title,
    location: result.source.url ?? result.source.object_key,
    headingPath: result.source.heading_path,
  }));
  // A segment is stemmed in its own language (`simple` when none was detected).
  const languages = [...new Set(results.map((result) => result.language ?? 'simple'))];
  return { results, passages, analyze: deps.search.analyzer(languages), retrievalMs: elapsed(started) };
}

export function generationRequest(chat: ResolvedChat, context: RetrievedContext, signal?: AbortSignal) {
  return {
    messages: buildPrompt({
      persona: chat.persona,
      systemPrompt: chat.systemPrompt,
      passages: context.passages,
      history: chat.history,
      query: chat.query,
      contextMode: chat.contextMode,
    }),
    query: chat.query,
    passages: context.passages,
    analyze: context.analyze,
    model: chat.model,
    temperature: chat.temperature,
    maxTokens: chat.maxTokens,
    signal,
  };
}

/** The sources as the response and the `sources` event list them: numbered like the prompt. */
export function presentSources(context: RetrievedContext, answer?: string) {
  const cited = answer === undefined ? undefined : citedNumbers(answer);
  return context.results.map((result, index) => ({
    citation: index + 1,
    cited: cited?.has(index + 1) ?? false,
    segment_id: result.segment_id,
    text: result.text,
    score: result.score,
    source: result.source,
  }));
}

export function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 100) / 100;
}
