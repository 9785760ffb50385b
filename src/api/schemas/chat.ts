/** Chat and search records (spec 2.8, 2.9, 4.3, 4.4): requests, responses and templates. */
import { Type } from 'typebox';
import { FreeObject } from './common.js';

/** Longest embedding model, LLM profile or provider model name a request may name. */
export const MAX_MODEL_NAME = 200;
/** Longest language (an ISO code or a text search configuration's name) a request may name. */
const MAX_LANGUAGE_NAME = 100;

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

export const SourceAttribution = Type.Object(
  {
    execution_id: Type.String({ format: 'uuid' }),
    document_id: Type.String(),
    url: nullable(Type.String()),
    object_key: nullable(Type.String()),
    link: nullable(
      Type.String({
        description:
          'what opens the source: `url` when it is http(s), else the stored object as a path of this service (`/api/v1/storage/objects/<key>`, resolve it against the base URL called), else null',
      }),
    ),
    title: nullable(Type.String()),
    heading_path: Type.Array(Type.String()),
  },
  { $id: 'SourceAttribution', description: 'where a segment came from' },
);

export const RankingComponent = Type.Object(
  {
    ranking: Type.Union([Type.Literal('keyword'), Type.Literal('vector'), Type.Literal('lsa')], {
      description: 'lsa: the corpus LSA list, present only when RRF fused one (WEIR_SEARCH_LSA=on)',
    }),
    rank: nullable(
      Type.Integer({ minimum: 1, description: '1-based rank in this ranking; null when absent from it' }),
    ),
    raw_score: nullable(
      Type.Number({ description: 'BM25F for keyword, cosine similarity for vector and lsa' }),
    ),
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

const SearchFields = {
  query: Type.String({
    minLength: 1,
    maxLength: 2000,
    description: 'websearch syntax for the keyword ranking',
  }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  sources: Type.Optional(
    Type.Array(Type.String({ format: 'uuid' }), {
      maxItems: 100,
      description: 'execution ids; absent = all',
    }),
  ),
  language: Type.Optional(
    Type.String({
      maxLength: MAX_LANGUAGE_NAME,
      description:
        'ISO code or text search config (en, nb, english): the stemmer for the query, and only segments in that language',
    }),
  ),
  match: Type.Union([Type.Literal('all'), Type.Literal('any')], {
    default: 'any',
    description:
      'keyword ranking: any = a natural-language query, a segment matching any of its words qualifies and BM25 ranks (the default); all = websearch syntax, every term required ("phrases", or, -exclusions)',
  }),
  expand: Type.Boolean({
    default: true,
    description:
      'keyword ranking with match any: add indexed words near the English query words in meaning (word vectors), at reduced weight',
  }),
  translate: Type.Boolean({
    default: true,
    description:
      'keyword ranking with match any: a question in another language than the index (Norwegian over English) is also searched with its words translated by a glossary; parameters.query_translations lists them',
  }),
};
const VectorFields = {
  embedding_model: Type.Optional(
    Type.String({ maxLength: MAX_MODEL_NAME, description: 'default: the first configured model' }),
  ),
};

export const KeywordSearchRequest = Type.Object(SearchFields, {
  $id: 'KeywordSearchRequest',
  additionalProperties: false,
});

export const VectorSearchRequest = Type.Object(
  { ...SearchFields, ...VectorFields },
  { $id: 'VectorSearchRequest', additionalProperties: false },
);

const RankingNumbers = (description: string, schema: { minimum: number; maximum: number }) =>
  Type.Object(
    {
      keyword: Type.Optional(Type.Number({ ...schema })),
      vector: Type.Optional(Type.Number({ ...schema })),
    },
    { additionalProperties: false, description },
  );

export const RRFSearchRequest = Type.Object(
  {
    ...SearchFields,
    ...VectorFields,
    k: Type.Integer({ minimum: 1, maximum: 1000, default: 60, description: 'RRF constant' }),
    weights: Type.Optional(RankingNumbers('per-ranking weight, default 1', { minimum: 0, maximum: 10 })),
    candidate_depth: Type.Optional(
      Type.Object(
        {
          keyword: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
          vector: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
        },
        { additionalProperties: false, description: 'candidates taken from each ranking, default 50' },
      ),
    ),
    rerank: Type.Boolean({
      default: true,
      description:
        're-score the first 40 fused candidates on query-word proximity, exact phrases and names, heading and title agreement and position on the page (docs/search-and-chat.md, "Rerank"); parameters.rerank says whether it ran',
    }),
  },
  { $id: 'RRFSearchRequest', additionalProperties: false },
);

export const retrievalStrategies = ['merge', 'sequential', 'ensemble', 'keyword'] as const;
export const contextModes = ['segments', 'none'] as const;

/** Retrieval settings, shared by templates (`rag`) and chat requests. */
export const RagSettingsFields = {
  strategy: Type.Optional(Type.Union(retrievalStrategies.map((name) => Type.Literal(name)))),
  sources: Type.Optional(Type.Array(Type.String({ format: 'uuid' }), { maxItems: 100 })),
  source_weights: Type.Optional(
    Type.Record(Type.String(), Type.Number({ minimum: 0, maximum: 10 }), {
      description: 'merge strategy: execution id -> weight on its similarities (default 1)',
    }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, description: 'passages in the prompt' })),
  min_score: Type.Optional(
    Type.Number({ minimum: 0, maximum: 1, description: 'sequential: similarity a passage needs to count' }),
  ),
  embedding_model: Type.Optional(Type.String({ maxLength: MAX_MODEL_NAME })),
  language: Type.Optional(Type.String({ maxLength: MAX_LANGUAGE_NAME })),
  context_mode: Type.Optional(Type.Union(contextModes.map((name) => Type.Literal(name)))),
};
export const RagSettings = Type.Object(RagSettingsFields, { additionalProperties: false });

/** Generation settings, shared by templates (`llm`) and chat requests. */
export const LlmSettingsFields = {
  profile: Type.Optional(Type.String({ maxLength: MAX_MODEL_NAME, description: 'an llm_profiles entry' })),
  model: Type.Optional(
    Type.String({ maxLength: MAX_MODEL_NAME, description: "provider-side model, overrides the profile's" }),
  ),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
  max_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 32_768 })),
};
export const LlmSettings = Type.Object(LlmSettingsFields, { additionalProperties: false });

export const ChatCompletionRequest = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 4000 }),
    history: Type.Array(
      Type.Object(
        {
          role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
          content: Type.String({ maxLength: 20_000 }),
        },
        { additionalProperties: false },
      ),
      { maxItems: 50, default: [] },
    ),
    configuration: Type.Optional(
      Type.Object(
        {
          template_id: Type.Optional(Type.String({ format: 'uuid' })),
          persona: Type.Optional(Type.String({ maxLength: 4000 })),
          system_prompt: Type.Optional(Type.String({ maxLength: 20_000 })),
          llm_profile: LlmSettingsFields.profile,
          model: LlmSettingsFields.model,
          temperature: LlmSettingsFields.temperature,
          max_tokens: LlmSettingsFields.max_tokens,
          ...RagSettingsFields,
        },
        {
          additionalProperties: false,
          description: 'request fields win over the template, which wins over the defaults',
        },
      ),
    ),
  },
  { $id: 'ChatCompletionRequest', additionalProperties: false },
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
        cited: Type.Boolean({ description: 'whether the answer cites [n]' }),
        segment_id: Type.String(),
        text: Type.String(),
        score: Type.Number(),
        source: Type.Ref('SourceAttribution'),
      }),
    ),
    model: Type.String({ description: "provider-side model, or the profile's name for extractive" }),
    provider: Type.String(),
    profile: Type.String(),
    strategy: Type.String(),
    template_id: nullable(Type.String({ format: 'uuid' })),
    usage: nullable(Type.Object({ prompt_tokens: Type.Integer(), completion_tokens: Type.Integer() })),
    retrieval_ms: Type.Number(),
    generation_ms: Type.Number(),
  },
  { $id: 'ChatCompletionResponse' },
);

const templateFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(nullable(Type.String({ maxLength: 10_000 }))),
  persona: Type.Optional(nullable(Type.String({ maxLength: 100_000 }))),
  system_prompt: Type.Optional(nullable(Type.String({ maxLength: 100_000 }))),
  rag: Type.Optional(
    FreeObject(
      'retrieval settings: strategy, sources, source_weights, limit, min_score, embedding_model, language, context_mode (checked: 400 when invalid)',
    ),
  ),
  llm: Type.Optional(
    FreeObject('generation settings: profile, model, temperature, max_tokens (checked: 400 when invalid)'),
  ),
  owner_id: Type.Optional(nullable(Type.String({ maxLength: 200 }))),
  is_public: Type.Optional(Type.Boolean({ default: false })),
  tags: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50 })),
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
  KeywordSearchRequest,
  VectorSearchRequest,
  RRFSearchRequest,
  ChatCompletionRequest,
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
