/**
 * Chat and search records (spec 2.8, 2.9, 4.3, 4.4). Published now so the contract is visible
 * in the OpenAPI document; the endpoints arrive with search and chat (docs/spec-coverage.md).
 */
import { Type } from 'typebox';
import { FreeObject } from './common.js';

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

export const SourceAttribution = Type.Object(
  {
    execution_id: Type.String({ format: 'uuid' }),
    document_id: Type.String(),
    url: nullable(Type.String()),
    object_key: nullable(Type.String()),
    title: nullable(Type.String()),
    heading_path: Type.Array(Type.String()),
  },
  { $id: 'SourceAttribution', description: 'where a segment came from' },
);

export const RankingComponent = Type.Object(
  {
    ranking: Type.Union([Type.Literal('keyword'), Type.Literal('vector')]),
    rank: nullable(
      Type.Integer({ minimum: 1, description: '1-based rank in this ranking; null when absent from it' }),
    ),
    raw_score: nullable(Type.Number({ description: 'ts_rank for keyword, cosine similarity for vector' })),
    weight: Type.Number(),
    contribution: Type.Number({ description: 'weight / (k + rank), 0 when absent' }),
  },
  { $id: 'RankingComponent' },
);

export const SearchResult = Type.Object(
  {
    segment_id: Type.String(),
    rank: Type.Integer({ minimum: 1 }),
    score: Type.Number({ description: 'RRF score (or the single ranking score for keyword/vector search)' }),
    text: Type.String(),
    language: nullable(Type.String()),
    source: Type.Ref('SourceAttribution'),
    components: Type.Array(Type.Ref('RankingComponent')),
  },
  { $id: 'SearchResult' },
);

export const RRFSearchResponse = Type.Object(
  {
    query: Type.String(),
    search_type: Type.Union([Type.Literal('rrf'), Type.Literal('keyword'), Type.Literal('vector')]),
    results: Type.Array(Type.Ref('SearchResult')),
    total: Type.Integer({ minimum: 0 }),
    took_ms: Type.Number(),
    parameters: FreeObject('effective parameters: k, weights, candidate depth, model, language, filters'),
  },
  { $id: 'RRFSearchResponse' },
);

export const CapabilitiesResponse = Type.Object(
  {
    llm_models: Type.Array(
      Type.Object({
        name: Type.String(),
        provider: Type.String(),
        model: nullable(Type.String()),
        is_default: Type.Boolean(),
      }),
    ),
    embedding_models: Type.Array(
      Type.Object({
        name: Type.String(),
        provider: Type.String(),
        dimensions: Type.Integer(),
        indexed_segments: Type.Integer({ minimum: 0 }),
        index_status: Type.Union([Type.Literal('ready'), Type.Literal('empty'), Type.Literal('unavailable')]),
      }),
    ),
    context_modes: Type.Array(Type.String()),
    retrieval_strategies: Type.Array(Type.String()),
    languages: Type.Array(Type.Object({ code: Type.String(), text_search_config: Type.String() })),
    defaults: FreeObject('default model, template, strategy, limits and temperature'),
  },
  { $id: 'CapabilitiesResponse' },
);

export const SourcesResponse = Type.Object(
  {
    sources: Type.Array(
      Type.Object({
        execution_id: Type.String({ format: 'uuid' }),
        config_id: nullable(Type.String({ format: 'uuid' })),
        config_name: nullable(Type.String()),
        tag: nullable(Type.String()),
        embedding_models: Type.Array(Type.String()),
        document_count: Type.Integer({ minimum: 0 }),
        segment_count: Type.Integer({ minimum: 0 }),
        indexed_at: nullable(Type.String({ format: 'date-time' })),
      }),
    ),
    total: Type.Integer({ minimum: 0 }),
  },
  { $id: 'SourcesResponse' },
);

export const ChatCompletionResponse = Type.Object(
  {
    answer: Type.String(),
    sources: Type.Array(
      Type.Object({
        citation: Type.Integer({ minimum: 1, description: 'the [n] used in the answer' }),
        segment_id: Type.String(),
        text: Type.String(),
        score: Type.Number(),
        source: Type.Ref('SourceAttribution'),
      }),
    ),
    model: Type.String(),
    provider: Type.String(),
    template_id: nullable(Type.String({ format: 'uuid' })),
    usage: nullable(Type.Object({ prompt_tokens: Type.Integer(), completion_tokens: Type.Integer() })),
    retrieval_ms: Type.Number(),
    generation_ms: Type.Number(),
  },
  { $id: 'ChatCompletionResponse' },
);

const templateFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(nullable(Type.String())),
  persona: Type.Optional(nullable(Type.String())),
  system_prompt: Type.Optional(nullable(Type.String())),
  rag: Type.Optional(FreeObject('retrieval settings: strategy, sources, limits, embedding model')),
  llm: Type.Optional(FreeObject('generation settings: profile, model, temperature, max tokens')),
  owner_id: Type.Optional(nullable(Type.String())),
  is_public: Type.Optional(Type.Boolean({ default: false })),
  tags: Type.Optional(Type.Array(Type.String())),
};

export const ChatTemplateInput = Type.Object(
  {
    id: Type.Optional(Type.String({ format: 'uuid', description: 'optional; generated when absent' })),
    ...templateFields,
  },
  { $id: 'ChatTemplateInput', additionalProperties: false },
);

export const ChatTemplate = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    ...templateFields,
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'ChatTemplate' },
);

export const TemplateListResponse = Type.Object(
  {
    templates: Type.Array(Type.Ref('ChatTemplate')),
    total: Type.Integer({ minimum: 0 }),
    limit: Type.Integer(),
    offset: Type.Integer(),
  },
  { $id: 'TemplateListResponse' },
);

export const chatSchemas = [
  SourceAttribution,
  RankingComponent,
  SearchResult,
  RRFSearchResponse,
  CapabilitiesResponse,
  SourcesResponse,
  ChatCompletionResponse,
  ChatTemplateInput,
  ChatTemplate,
  TemplateListResponse,
];
